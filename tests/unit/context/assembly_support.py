"""Shared builders for the assembler, history and replay tests: a real SQLite home per session."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from kairox.context.assembler import AssemblyInput
from kairox.context.history import HistoryItem
from kairox.context.tokens import Tokenizer, TokenizerRegistry
from kairox.core.events import (
    AssistantMessageCompleted,
    CompactionSummary,
    EventPayload,
    StoredEvent,
    ToolInvocationCompleted,
    UserMessageAdded,
)
from kairox.core.messages import ChatMessage
from kairox.core.records import MemoryRecord, MemoryView
from kairox.core.types import Actor, MemoryScope, MemoryStatus
from kairox.retrieval.types import RetrievalHit
from kairox.store.db import Database
from kairox.store.events import SqliteEventStore
from kairox.store.memories import SqliteMemoryStore
from kairox.testing import FakeClock

SESSION = "sess"
WORKSPACE = "ws"
REGISTRY = TokenizerRegistry()


def words(n: int, word: str = "word") -> str:
    return " ".join(f"{word}{i % 10}" for i in range(n))


@dataclass
class Home:
    """One session in a real home: the event log and the memory store share the database."""

    path: Path
    tokenizer: Tokenizer
    clock: FakeClock = field(default_factory=FakeClock)

    def __post_init__(self) -> None:
        self.db = Database.open(self.path / "k.db")
        self.events = SqliteEventStore(self.db, self.clock)
        self.memories = SqliteMemoryStore(self.db, self.events, self.clock)
        self.turn = 0

    def append(self, payload: EventPayload) -> StoredEvent:
        self.clock.advance()
        return self.events.append(
            payload, session_id=SESSION, workspace_id=WORKSPACE, counter=self.tokenizer
        )

    def user(self, text: str) -> StoredEvent:
        self.turn += 1
        return self.append(UserMessageAdded(turn=self.turn, text=text))

    def assistant(self, text: str) -> StoredEvent:
        return self.append(AssistantMessageCompleted(turn=self.turn, text=text, model="m"))

    def tool(
        self, result: str, *, name: str = "read_file", arguments: str = '{"p": 1}'
    ) -> StoredEvent:
        seq = self.events.last_seq() + 1
        return self.append(
            ToolInvocationCompleted(
                turn=self.turn,
                call_id=f"call_{seq}",
                name=name,
                arguments=arguments,
                result=result,
            )
        )

    def summary(
        self, from_seq: int, to_seq: int, text: str, previous: int | None = None
    ) -> StoredEvent:
        return self.append(
            CompactionSummary(
                from_seq=from_seq,
                to_seq=to_seq,
                text=text,
                model="m",
                tokens_before=0,
                tokens_after=0,
                previous_summary_seq=previous,
            )
        )

    def memory(
        self, key: str | None, body: str, *, scope: MemoryScope = MemoryScope.USER
    ) -> MemoryRecord:
        self.clock.advance()
        proposed = self.memories.propose(
            scope, key, body, workspace_id=WORKSPACE, session_id=SESSION
        )
        self.clock.advance()
        return self.memories.accept(proposed.id, actor=Actor.USER)

    def accepted(self) -> list[MemoryRecord]:
        return self.memories.for_context(MemoryView(workspace_id=WORKSPACE, session_id=SESSION))


def memory_record(
    key: str | None,
    body: str,
    *,
    at: int = 0,
    version: int = 1,
    status: MemoryStatus = MemoryStatus.ACCEPTED,
) -> MemoryRecord:
    """An in-memory record, for tests that do not need the store."""
    moment = datetime.fromtimestamp(1_700_000_000 + at, tz=UTC)
    return MemoryRecord(
        id=f"mem_{key or body[:8]}",
        scope=MemoryScope.USER if key else MemoryScope.SESSION,
        key=key,
        body=body,
        status=status,
        version=version,
        workspace_id=WORKSPACE,
        session_id=SESSION,
        created_at=moment,
        updated_at=moment,
        approved_at=moment,
        decided_by=Actor.USER,
        decision_reason=None,
        proposed_session_id=SESSION,
        proposed_turn=1,
        untrusted_inputs=(),
    )


def hit(source: str, chunk: str, text: str, **extra: object) -> RetrievalHit:
    return RetrievalHit.model_validate(
        {"source": source, "chunk_id": chunk, "text": text, "score": 1.0, **extra}
    )


def history_item(
    seq: int, text: str, tokenizer: Tokenizer, *, role: str = "user", at: int = 0
) -> HistoryItem:
    """A user or assistant item with its exact cost, without a store."""
    message = ChatMessage.model_validate({"role": role, "content": text})
    return HistoryItem(
        seq=seq,
        seqs=(seq,),
        kind="user" if role == "user" else "assistant",
        turn=None,
        messages=(message,),
        tokens=tokenizer.message_overhead(message) + tokenizer.count(text),
        ts=datetime.fromtimestamp(1_700_000_000 + at, tz=UTC),
    )


def make_input(
    *,
    history: list[HistoryItem] | None = None,
    memories: list[MemoryRecord] | None = None,
    workspace: list[RetrievalHit] | None = None,
    kb: list[RetrievalHit] | None = None,
    prompt: str = "What next?",
    system: str = "You are Kairox.",
    instructions: str = "",
    prompt_seq: int | None = None,
    turn: int = 1,
) -> AssemblyInput:
    return AssemblyInput(
        system_prompt=system,
        instructions=instructions,
        memories=memories or [],
        workspace_hits=workspace or [],
        kb_hits=kb or [],
        history=history or [],
        prompt=prompt,
        turn=turn,
        model="openai:gpt-4o",
        prompt_seq=prompt_seq,
    )


def pairs_intact(messages: tuple[ChatMessage, ...]) -> bool:
    """Every tool call is followed by its result, and every result follows its call."""
    for index, message in enumerate(messages):
        if message.tool_calls:
            after = messages[index + 1] if index + 1 < len(messages) else None
            if after is None or after.role != "tool":
                return False
            if after.tool_call_id != message.tool_calls[0].id:
                return False
        if message.role == "tool":
            before = messages[index - 1] if index > 0 else None
            if before is None or not before.tool_calls:
                return False
    return True
