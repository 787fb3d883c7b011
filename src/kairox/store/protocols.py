"""The store protocols: what every layer above ``kairox.store`` types its persistence by.

Events, sessions, memories, workspace chunks, the history (recall) index and the memory search
index each have a SQLite and
a Postgres implementation in this package, and one contract suite in ``tests/contracts/`` runs
over both. ``StoreBackend`` names only these protocols, so a backend is a set of classes, not a
hunt through the layers above.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kairox.core.events import EventPayload, StoredEvent, UntrustedInput
from kairox.core.records import (
    ImportedMemory,
    MemoryImport,
    MemoryRecord,
    MemoryVersion,
    MemoryView,
)
from kairox.core.types import Actor, MemoryOrigin, MemoryScope, MemoryStatus
from kairox.store.events import FieldMatch, HistoryRow, NewEvent, TextCounter
from kairox.store.hub import DEFAULT_POLL_S, Subscription
from kairox.store.records import (
    FileState,
    FileUpdate,
    HistoryUnit,
    MemoryUnit,
    SessionInfo,
    StoredChunk,
    StoreVectorIndex,
)
from kairox.store.tokens import TokenInfo, TokenWorkspace

if TYPE_CHECKING:  # NumPy loads only with chunks and the indexes
    from kairox.store.knowledge_base import KbPassageHit, KbPassageRow, StoreOutcome
    from kairox.store.vectors import FloatMatrix, IdArray


class EventStore(Protocol):
    """The event log every layer above the store uses; backends: SQLite, Postgres."""

    def append(
        self,
        payload: EventPayload,
        *,
        session_id: str | None,
        workspace_id: str | None,
        counter: TextCounter | None = None,
    ) -> StoredEvent: ...

    def append_many(
        self, events: Sequence[NewEvent], *, counter: TextCounter | None = None
    ) -> list[int]:
        """Append ``events`` in order, as ``append`` would one by one; returns their seqs.
        One timestamp and a few statements for the lot (bulk imports)."""
        ...

    def read(
        self,
        *,
        after: int = 0,
        session_id: str | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
        until: int | None = None,
        workspace_id: str | None = None,
        exclude_types: Sequence[str] = (),
        home_wide: bool = False,
    ) -> list[StoredEvent]:
        """Events after ``after`` (to ``until``), oldest first, filtered by session, workspace
        (``home_wide``: and the events of no workspace), ``types`` and ``exclude_types``, at
        most ``limit``."""
        ...

    def get(self, seq: int) -> StoredEvent | None: ...

    def last_seq(self) -> int: ...

    def subscribe(
        self,
        *,
        after: int | None = None,
        session_id: str | None = None,
        poll_s: float = DEFAULT_POLL_S,
    ) -> Subscription:
        """Every committed event after ``after`` (default: from now), from any process, once
        each and in seq order. Call it on the event loop that iterates the subscription."""
        ...

    def latest(
        self,
        session_id: str,
        event_type: str,
        *,
        where: FieldMatch | None = None,
        before: int | None = None,
    ) -> StoredEvent | None:
        """The session's newest event of ``event_type`` (below ``before``, matching ``where``)."""
        ...

    def count(
        self, *, session_id: str, types: Sequence[str], where_json: FieldMatch | None = None
    ) -> int: ...

    def token_counts(self, seqs: Sequence[int], counter: TextCounter) -> dict[int, int]: ...

    def history_page(
        self,
        session_id: str,
        types: Sequence[str],
        *,
        counter: str,
        chat_counter: str,
        before: int | None,
        limit: int,
    ) -> list[HistoryRow]:
        """Up to ``limit`` events of ``types`` with seq < ``before``, newest first, with the
        cached counts under the counter names ``counter`` and ``chat_counter``."""
        ...

    @property
    def pushes_changes(self) -> bool:
        """True when ``wait_for_append`` is woken by the database (no polling needed)."""
        ...

    def wait_for_append(self, after: int, timeout_s: float) -> bool:
        """Block until an event past ``after`` may exist (True) or ``timeout_s`` passes."""
        ...


class SessionStore(Protocol):
    """Sessions, workspaces and the per-session lease, whatever the backend."""

    def ensure_workspace(self, path: str | Path) -> str: ...

    def workspace_path(self, workspace_id: str) -> str: ...

    def start(self, name: str, workspace: str | Path, profile: str) -> SessionInfo: ...

    def get(self, name_or_id: str, workspace_id: str | None = None) -> SessionInfo:
        """The session with this id, or with this name in ``workspace_id``. Without a workspace
        a name must be unique in the home (names are unique per workspace only)."""
        ...

    def find(self, name_or_id: str, workspace_id: str | None = None) -> SessionInfo | None: ...

    def named(self, name: str) -> builtins.list[SessionInfo]:
        """Every session called ``name``, whatever its workspace, oldest first."""
        ...

    def list(
        self, workspace_id: str | None = None, *, include_archived: bool = False
    ) -> builtins.list[SessionInfo]: ...

    def archive(
        self,
        name_or_id: str,
        discard: Callable[[str], builtins.list[str]],
        workspace_id: str | None = None,
    ) -> SessionInfo:
        """Archive the session; ``discard(session_id)`` drops its session memories in the same
        transaction. Archiving twice is a no-op."""
        ...

    def unarchive(self, name_or_id: str, workspace_id: str | None = None) -> SessionInfo: ...

    def switch_profile(
        self, name_or_id: str, profile: str, workspace_id: str | None = None
    ) -> SessionInfo: ...

    def acquire_lease(
        self, session_id: str, holder: str, *, ttl_s: float = 30.0, wait_s: float = 0.0
    ) -> None: ...

    def renew_lease(self, session_id: str, holder: str, *, ttl_s: float = 30.0) -> None: ...

    def release_lease(self, session_id: str, holder: str) -> None: ...

    def default_holder(self) -> str: ...


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

    def edit(
        self,
        memory_id: str,
        body: str,
        *,
        actor: Actor,
        untrusted: Sequence[UntrustedInput] = (),
    ) -> MemoryRecord:
        """Change the body (a new version); ``untrusted`` joins the memory's taint."""
        ...

    def delete(self, memory_id: str, *, actor: Actor) -> MemoryRecord: ...

    def undo(self, memory_id: str, *, actor: Actor) -> MemoryRecord: ...

    def undoable(self, memory_ids: Sequence[str]) -> set[str]:
        """Which of ``memory_ids`` have an edit, replacement or delete that ``undo`` would
        revert (for the others ``undo`` raises: there is nothing to undo)."""
        ...

    def discard_session(self, session_id: str) -> builtins.list[str]:
        """Delete the live session memories of ``session_id`` (a ``MemoryDeleted`` each)."""
        ...

    def get(self, memory_id: str, *, workspace_id: str | None = None) -> MemoryRecord:
        """The memory an id or a unique prefix names. With ``workspace_id``, only the user's
        memories and that workspace's own are found (a prefix is matched among them only)."""
        ...

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
        newest: int | None = None,
        ids: Sequence[str] | None = None,
    ) -> builtins.list[MemoryRecord]: ...

    def for_context(self, view: MemoryView) -> builtins.list[MemoryRecord]: ...

    def count_proposals(self, session_id: str, turn: int) -> int: ...


class RankStore(Protocol):
    """What hybrid ranking reads, per scope (a workspace's chunks, or a workspace's or a
    session's history): the documents' texts and versions for the in-memory keyword index
    (``kairox.retrieval.bm25``, whose statistics count that scope only, so another workspace's
    traffic never changes a score), vectors and a generation."""

    @property
    def keyword_weights(self) -> tuple[float, ...]:
        """The weights of the fields ``keyword_documents`` returns (BM25 column weights)."""
        ...

    def generation(self, workspace_id: str) -> int: ...
    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]: ...
    def keyword_keys(self, workspace_id: str) -> list[tuple[int, str]]:
        """(id, version) of every document of the scope; a version changes with its text."""
        ...

    def keyword_documents(
        self, workspace_id: str, ids: Sequence[int] | None = None, *, after_id: int = 0
    ) -> list[tuple[int, tuple[str, ...]]]:
        """(id, field texts) of the scope's documents ``ids`` (every one with an id above
        ``after_id`` when None), by id."""
        ...


@runtime_checkable
class VectorDelta(Protocol):
    """A ``RankStore`` whose vectors can be caught up piecemeal: the in-memory matrix of a
    scope reads only the vectors whose version changed (``kairox.retrieval.vectors``)."""

    def vector_keys(self, workspace_id: str, model: str) -> list[tuple[int, str]]:
        """(id, version) of every vector of ``model`` in the scope; a version changes with the
        vector."""
        ...

    def load_vectors_of(
        self, workspace_id: str, model: str, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix] | None:
        """The vectors of these ids (those that have one), by id; None if of several sizes."""
        ...


@runtime_checkable
class IndexedVectors(Protocol):
    """A store that keeps an approximate nearest-neighbour index of a scope's vectors itself
    (pgvector HNSW on Postgres), shared by every process: a ranker asks it for a query's
    nearest vectors instead of holding the scope's matrix (``kairox.retrieval.search``)."""

    def vector_index(self, workspace_id: str, model: str) -> StoreVectorIndex:
        """The scope's index of ``model`` (its vector size when ready) and row count."""
        ...

    def build_vector_index(self, workspace_id: str, model: str) -> int | None:
        """Build the scope's index of ``model``'s vectors (blocking; once per store, whichever
        process gets there first; later writes keep it up to date): their size, or None when
        the scope has none."""
        ...

    def nearest_vectors(
        self, workspace_id: str, model: str, vector: FloatMatrix, depth: int
    ) -> list[tuple[int, float]]:
        """The index's ``depth`` nearest rows to the unit ``vector`` as (id, cosine), best
        first."""
        ...

    def vector_cosines(
        self, workspace_id: str, model: str, vector: FloatMatrix, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix]:
        """The exact cosines of the rows ``ids`` that have a vector: (ascending ids, cosines)."""
        ...


class ChunkStore(RankStore, VectorDelta, Protocol):
    """Persistence of files, chunks, keyword index and vectors for workspace retrieval."""

    def ensure_workspace(self, workspace_id: str, root: str) -> None: ...
    def chunker(self, workspace_id: str) -> str: ...
    def set_chunker(self, workspace_id: str, signature: str) -> None: ...
    def chunk_count(self, workspace_id: str) -> int: ...
    def file_states(self, workspace_id: str) -> dict[str, FileState]: ...
    def write_files(
        self, workspace_id: str, updates: Sequence[FileUpdate], *, model: str | None
    ) -> int: ...
    def touch_files(self, workspace_id: str, states: Sequence[FileState]) -> None: ...
    def delete_files(self, workspace_id: str, paths: Sequence[str]) -> int: ...
    def vectors_by_hash(
        self, workspace_id: str, paths: Sequence[str], model: str
    ) -> dict[str, bytes]: ...
    def count_missing_vectors(self, workspace_id: str, model: str) -> int: ...
    def chunks_missing_vectors(
        self, workspace_id: str, model: str, *, limit: int
    ) -> list[tuple[int, str]]: ...
    def put_vectors(
        self, workspace_id: str, model: str, ids: Sequence[int], vectors: FloatMatrix
    ) -> None: ...
    def get_chunks(self, workspace_id: str, ids: Sequence[int]) -> list[StoredChunk]: ...


class HistoryStore(RankStore, Protocol):
    """The history (recall) index: one unit per conversation event, its keyword index and
    vectors. A scope is a workspace, or one session of it (``kairox.store.history.history_scope``);
    term statistics are the scope's own."""

    def last_seq(self) -> int: ...
    def add_units(self, units: Sequence[HistoryUnit], *, last_seq: int) -> int: ...
    def last_unit(self, session_id: str) -> HistoryUnit | None: ...
    def unit_count(self, workspace_id: str | None = None) -> int: ...
    def units_missing_vectors(
        self, workspace_id: str, model: str, *, after_id: int = 0, limit: int
    ) -> list[HistoryUnit]: ...
    def put_vectors(
        self, workspace_id: str, model: str, ids: Sequence[int], vectors: FloatMatrix
    ) -> None: ...
    def load_vectors_after(
        self, scope: str, model: str, after_id: int
    ) -> tuple[IdArray, FloatMatrix]: ...
    def unit_sessions(self, workspace_id: str, *, after_id: int = 0) -> list[tuple[int, str]]: ...
    def get_units(self, ids: Sequence[int]) -> list[HistoryUnit]: ...
    def session_names(self, session_ids: Sequence[str]) -> dict[str, str]: ...


class MemoryIndexStore(RankStore, Protocol):
    """The memory search index: one unit per live memory, derived from the memory events (a
    watermark says how far the log was read). A scope is a workspace: its memories and the
    user's."""

    def last_seq(self) -> int: ...
    def apply(
        self, upserts: Sequence[MemoryUnit], deletes: Sequence[str], *, last_seq: int
    ) -> int: ...
    def count_missing_vectors(self, model: str) -> int: ...
    def embedded_at(self, model: str) -> int | None: ...
    def mark_embedded(self, model: str, generation: int) -> None: ...
    def units_missing_vectors(
        self, model: str, *, limit: int, after_id: int = 0
    ) -> builtins.list[tuple[int, MemoryUnit]]: ...
    def put_vectors(self, model: str, ids: Sequence[int], vectors: FloatMatrix) -> None: ...
    def get_units(self, ids: Sequence[int]) -> dict[int, MemoryUnit]: ...
    def has_own_units(self, workspace_id: str) -> bool: ...
    def load_vectors_of(
        self, workspace_id: str, model: str, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix] | None: ...


class KnowledgeBaseStore(Protocol):
    """The file of a ``sqlite_fts`` knowledge base: documents, passages and a keyword index of
    their terms (``kairox.store.words``). Blocking."""

    def exists(self) -> bool: ...
    def close(self) -> None: ...
    def document_count(self) -> int: ...
    def passage_count(self) -> int: ...
    def search(self, terms: Sequence[str], k: int) -> list[KbPassageHit]: ...
    def document_frequencies(self, stems: Sequence[str]) -> dict[str, int]: ...
    def put_document(
        self, path: str, title: str, content_hash: str, passages: Sequence[KbPassageRow]
    ) -> StoreOutcome: ...


class TokenStore(Protocol):
    """The shared MCP server's access tokens, stored by SHA-256 (never in clear)."""

    def create(
        self,
        name: str,
        token_hash: str,
        *,
        workspaces: Sequence[TokenWorkspace],
        read_only: bool,
    ) -> TokenInfo: ...
    def get(self, name: str) -> TokenInfo: ...
    def list(self) -> builtins.list[TokenInfo]: ...
    def by_hash(self, token_hash: str) -> TokenInfo | None: ...
    def revoke(self, name: str) -> TokenInfo: ...
    def touch(self, name: str) -> None:
        """Record a use of the token now."""
        ...
