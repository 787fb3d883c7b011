"""The ``MemoryStore`` protocol: what the engine needs from memory storage, by explicit owner."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from kairox.core.events import UntrustedInput
from kairox.core.records import (
    ImportedMemory,
    MemoryImport,
    MemoryRecord,
    MemoryVersion,
    MemoryView,
)
from kairox.core.types import Actor, MemoryOrigin, MemoryScope, MemoryStatus


class MemoryStore(Protocol):
    def atomic(self) -> AbstractContextManager[object]:
        """One transaction around many changes: all of them happen, or none."""
        ...

    def propose(
        self,
        scope: MemoryScope,
        key: str | None,
        body: str,
        *,
        workspace_id: str | None,
        session_id: str | None,
        turn: int | None = None,
        untrusted_inputs: Sequence[UntrustedInput] = (),
        forget: bool = False,
        origin: MemoryOrigin | None = None,
    ) -> MemoryRecord:
        """A pending proposal (``forget``: to delete the key's accepted memory)."""
        ...

    def identical(
        self,
        scope: MemoryScope,
        key: str | None,
        body: str,
        *,
        workspace_id: str | None,
        session_id: str | None,
    ) -> MemoryRecord | None:
        """The accepted memory or pending proposal with this scope, owner, key and body; an
        identical ``propose`` returns it and writes nothing."""
        ...

    def import_many(
        self,
        entries: Sequence[MemoryImport],
        *,
        workspace_id: str,
        actor: Actor,
        progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[ImportedMemory]:
        """Each entry as ``propose`` then (unless ``accept`` is False) ``accept`` would do it, in
        order, in one transaction: the same events and rows, an identical one a no-op, a known key
        overwritten in place. User and workspace memories only; a bad entry (no key, an empty or
        over-long body) fails the whole call in one line naming it. ``progress(done, total)`` is
        called as batches are written. One result per entry."""
        ...

    def accept(self, memory_id: str, *, actor: Actor, body: str | None = None) -> MemoryRecord: ...

    def reject(self, memory_id: str, *, actor: Actor, reason: str = ...) -> MemoryRecord: ...

    def edit(self, memory_id: str, body: str, *, actor: Actor) -> MemoryRecord: ...

    def delete(self, memory_id: str, *, actor: Actor) -> MemoryRecord: ...

    def undo(self, memory_id: str, *, actor: Actor) -> MemoryRecord: ...

    def undoable(self, memory_ids: Sequence[str]) -> set[str]:
        """Which of ``memory_ids`` have an edit, replacement or delete that ``undo`` would
        revert (for the others ``undo`` raises: there is nothing to undo)."""
        ...

    def discard_session(self, session_id: str) -> builtins.list[str]:
        """Delete the live session memories of ``session_id`` (a ``MemoryDeleted`` each)."""
        ...

    def get(self, memory_id: str) -> MemoryRecord: ...

    def get_many(self, memory_ids: Sequence[str]) -> builtins.list[MemoryRecord]:
        """The rows of these exact ids, in order; ids without a row are left out."""
        ...

    def history(self, memory_id: str) -> list[MemoryVersion]: ...

    def list(
        self,
        view: MemoryView,
        *,
        scopes: Sequence[MemoryScope] | None = None,
        statuses: Sequence[MemoryStatus] | None = None,
        text: str | None = None,
        all_sessions: bool = False,
    ) -> builtins.list[MemoryRecord]: ...

    def for_context(self, view: MemoryView) -> builtins.list[MemoryRecord]: ...

    def count_proposals(self, session_id: str, turn: int) -> int: ...
