"""Test helpers: a bare session log (no engine) and the ``CompactionTarget`` that reads it."""

from __future__ import annotations

from dataclasses import dataclass, field

from kairox.compaction.target import CompactionTarget
from kairox.context.assembler import Quotas
from kairox.context.tokens import Tokenizer, TokenizerRegistry
from kairox.context.windows import resolve_window
from kairox.core.config import CompactionConfig
from kairox.core.events import (
    AssistantMessageCompleted,
    CompactionSummary,
    EventPayload,
    StoredEvent,
    ToolInvocationCompleted,
    UserMessageAdded,
)
from kairox.runtime.prompts import build_system_prompt
from kairox.services import Services
from kairox.store.records import SessionInfo

TOKENIZER: Tokenizer = TokenizerRegistry().for_model("openai:gpt-4o")


@dataclass
class Log:
    services: Services
    session: SessionInfo
    turns: int = 0
    seqs: dict[int, list[int]] = field(default_factory=dict)  # turn -> its history seqs

    def append(self, payload: EventPayload) -> StoredEvent:
        return self.services.events.append(
            payload,
            session_id=self.session.id,
            workspace_id=self.session.workspace_id,
            counter=TOKENIZER,
        )

    def turn(self, user: str, reply: str = "", *, tool: tuple[str, str] | None = None) -> int:
        """Append one turn: the user message, an optional tool pair, the reply."""
        self.turns += 1
        n = self.turns
        seqs = [self.append(UserMessageAdded(turn=n, text=user)).seq]
        if tool is not None:
            args, result = tool
            pair = ToolInvocationCompleted(
                turn=n, call_id=f"c{n}", name="read_file", arguments=args, result=result
            )
            seqs.append(self.append(pair).seq)
        if reply:
            completed = AssistantMessageCompleted(turn=n, text=reply, model="scripted")
            seqs.append(self.append(completed).seq)
        self.seqs[n] = seqs
        return n

    def summary(self, from_seq: int, to_seq: int, text: str, **extra: object) -> StoredEvent:
        payload = CompactionSummary(
            from_seq=from_seq,
            to_seq=to_seq,
            text=text,
            model="scripted",
            tokens_before=100,
            tokens_after=10,
            **extra,
        )
        return self.append(payload)


def make_target(
    log: Log,
    *,
    window: int = 2048,
    headroom: int = 256,
    instructions: str = "",
    **config: object,
) -> CompactionTarget:
    return CompactionTarget(
        events=log.services.events,
        memories=log.services.memories,
        clock=log.services.clock,
        session_id=log.session.id,
        workspace_id=log.session.workspace_id,
        tokenizer=TOKENIZER,
        budget=resolve_window("openai:gpt-4o", context_window=window, headroom=headroom),
        quotas=Quotas(),
        system_prompt=build_system_prompt(""),
        instructions=instructions,
        model="openai:gpt-4o",
        config=CompactionConfig.model_validate(config),
    )


def words(n: int, word: str = "alpha") -> str:
    """A text of exactly ``n`` tokens under o200k (`` alpha`` is one token)."""
    return word + f" {word}" * (n - 1)
