"""What compaction knows about one session: its log, tokenizer, budget and prompt frame.

Policy, layer choice and verification all read the session through this one bundle, so they can be
tested on a bare store without a running engine; the pipeline builds it from the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kairox.context.assembler import Assembly, AssemblyInput, ContextAssembler, Quotas
from kairox.context.history import HistoryItem
from kairox.context.tokens import Tokenizer
from kairox.context.windows import Budget
from kairox.core.clock import Clock
from kairox.core.config import CompactionConfig
from kairox.core.events import ModelCallStarted, StoredEvent, UserMessageAdded
from kairox.core.records import MemoryRecord, MemoryView
from kairox.store.protocols import EventStore, MemoryStore

# A probe prompt for dry runs made when the next prompt is not known yet.
PROBE_PROMPT = ""


@dataclass(frozen=True)
class CompactionTarget:
    """One session as compaction sees it, with the same frame its next turn would use."""

    events: EventStore
    memories: MemoryStore
    clock: Clock
    session_id: str
    workspace_id: str
    tokenizer: Tokenizer
    budget: Budget
    quotas: Quotas
    system_prompt: str
    instructions: str
    model: str
    config: CompactionConfig
    tool_tokens: int = 0  # the tool definitions every request of the session carries

    @property
    def limit(self) -> int:
        """The most the next turn may use before compaction is due: threshold x budget."""
        return int(self.budget.budget * self.config.threshold)

    def context_memories(self) -> list[MemoryRecord]:
        view = MemoryView(workspace_id=self.workspace_id, session_id=self.session_id)
        return self.memories.for_context(view)

    def dry_run(
        self,
        history: Sequence[HistoryItem],
        *,
        prompt: str = PROBE_PROMPT,
        memories: Sequence[MemoryRecord] | None = None,
    ) -> Assembly:
        """Assemble as the next turn would, without retrieval; raises ``ContextOverflow``."""
        assembler = ContextAssembler(
            self.tokenizer, self.budget, quotas=self.quotas, tool_tokens=self.tool_tokens
        )
        return assembler.assemble(
            AssemblyInput(
                system_prompt=self.system_prompt,
                instructions=self.instructions,
                memories=self.context_memories() if memories is None else memories,
                workspace_hits=(),
                kb_hits=(),
                history=history,
                prompt=prompt,
                turn=0,
                model=self.model,
            )
        )

    def latest(self, event_type: str) -> StoredEvent | None:
        """The session's newest event of ``event_type`` (reads back from the end of the log)."""
        return self.events.latest(self.session_id, event_type)

    def turn_count(self) -> int:
        """The latest turn's number (turns are numbered 1, 2, ... in the order they start)."""
        latest = self.latest("UserMessageAdded")
        if latest is None or not isinstance(latest.payload, UserMessageAdded):
            return 0
        return latest.payload.turn

    def summary_calls(self) -> int:
        """How many summary model calls the session has made: one more than the last call's
        index, found by reading back from the end instead of counting the whole session."""
        last = self.events.latest(self.session_id, "ModelCallStarted", where=("purpose", "summary"))
        if last is None or not isinstance(last.payload, ModelCallStarted):
            return 0
        return last.payload.call_index + 1
