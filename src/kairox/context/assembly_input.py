"""What the ``ContextAssembler`` (``kairox.context.assembler``) takes and gives: the per-source
quotas, one assembly's inputs, and its result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kairox.context.history import HistoryItem
from kairox.context.render import Plan
from kairox.core.errors import InvalidInput
from kairox.core.events import ContextAssembled
from kairox.core.messages import ChatMessage
from kairox.core.records import MemoryRecord
from kairox.core.types import ContextSource
from kairox.retrieval.types import RetrievalHit


@dataclass(frozen=True, slots=True)
class Quotas:
    """What each source may take: a float is a fraction of the budget, an int is tokens.

    The memory quota is what memories are sure of ahead of the compaction summary and this turn's
    tool rounds; memories past it still go in ahead of all other history and retrieval, and only
    when memories alone exceed the budget do they compete, by relevance. Retrieval hits past
    their quota are left out.
    """

    memory: float | int = 0.25
    workspace: float | int = 0.15
    knowledge_base: float | int = 0.15
    recall: float | int = 0.1

    def __post_init__(self) -> None:
        for name in ("memory", "workspace", "knowledge_base", "recall"):
            value = getattr(self, name)
            bad = isinstance(value, bool) or not isinstance(value, int | float)
            if bad or value < 0 or (isinstance(value, float) and value > 1.0):
                raise InvalidInput(
                    f"quota '{name}' must be a fraction between 0.0 and 1.0 or a whole number "
                    f"of tokens, got {value!r}"
                )

    def tokens(self, source: ContextSource, budget: int) -> int:
        value = {
            ContextSource.MEMORY: self.memory,
            ContextSource.WORKSPACE: self.workspace,
            ContextSource.KNOWLEDGE_BASE: self.knowledge_base,
            ContextSource.RECALL: self.recall,
        }[source]
        return int(budget * value) if isinstance(value, float) else int(value)


@dataclass(frozen=True, slots=True)
class AssemblyInput:
    system_prompt: str
    instructions: str
    memories: Sequence[MemoryRecord]
    workspace_hits: Sequence[RetrievalHit]
    kb_hits: Sequence[RetrievalHit]
    history: Sequence[HistoryItem]  # oldest first, all before the prompt
    prompt: str
    turn: int
    model: str
    retrieval_errors: Sequence[str] = ()
    retrieval_notes: Sequence[str] = ()
    prompt_seq: int | None = None  # the prompt's UserMessageAdded, when already appended
    tail: Sequence[HistoryItem] = ()  # this turn's tool rounds so far, oldest first
    relevance_floor: float = 0.0  # hits scoring under it are traced and left out
    recall_hits: Sequence[RetrievalHit] = ()  # events recalled from the log, best first
    # Memory id -> the memory search's score for the prompt: when memories alone exceed the
    # budget, the best scored go in first (then a key or body word match, then the newest).
    memory_relevance: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Assembly:
    messages: tuple[ChatMessage, ...]
    trace: ContextAssembled
    plan: Plan
