"""The composition root: builds every service from explicit dependencies for one home directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kairox.core.clock import Clock, SystemClock
from kairox.core.paths import database_path, resolve_home
from kairox.memory.service import ApprovalService, MemoryPolicy
from kairox.runtime.prompts import PROMPT_TEXTS
from kairox.store.db import Database
from kairox.store.events import SqliteEventStore
from kairox.store.memories import SqliteMemoryStore
from kairox.store.sessions import SessionRegistry


@dataclass
class Services:
    home: Path
    db: Database
    clock: Clock
    events: SqliteEventStore
    memories: SqliteMemoryStore
    sessions: SessionRegistry
    approval: ApprovalService

    @classmethod
    def open(
        cls,
        home: str | Path | None = None,
        *,
        clock: Clock | None = None,
        policy: MemoryPolicy | None = None,
    ) -> Services:
        root = resolve_home(home)
        clock = clock or SystemClock()
        db = Database.open(database_path(root))
        events = SqliteEventStore(db, clock)
        memories = SqliteMemoryStore(db, events, clock)
        return cls(
            home=root,
            db=db,
            clock=clock,
            events=events,
            memories=memories,
            sessions=SessionRegistry(db, events, clock),
            approval=ApprovalService(memories, policy or MemoryPolicy(example_texts=PROMPT_TEXTS)),
        )

    def close(self) -> None:
        self.db.close()
