"""The records the store protocols (``kairox.store.protocols``) take and return, whatever the
backend: a session, a workspace file and its chunks, a history (recall) unit, a memory search
unit. The implementations build them; the layers above read them. NumPy is named only for type
checking (``kairox.store.vectors``), so importing the protocols never loads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from kairox.store.words import runs, words

if TYPE_CHECKING:
    from kairox.store.vectors import FloatMatrix

# -- sessions ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    name: str
    workspace_id: str
    workspace_path: str
    profile: str
    created_at: datetime
    started_seq: int
    archived: bool = False
    answered_by: str | None = None
    """The model (its spec) that answered the session's latest turn, as a listing
    (``facade.sessions.list``) reports it; None before the first reply or outside a listing."""


# -- workspace chunks -------------------------------------------------------------------------


class ChunkLike(Protocol):
    """What the store keeps of a chunk (``kairox.retrieval.chunking.Chunk``)."""

    @property
    def ord(self) -> int: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def chunk_hash(self) -> str: ...


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index knows about a file; ``indexed_ns`` is when it was last checked."""

    path: str
    size: int
    mtime_ns: int
    file_hash: str
    indexed_ns: int


@dataclass(frozen=True, slots=True)
class FileUpdate:
    """A file's new chunks; ``vectors`` (one row per chunk, or None) belong to ``model``."""

    state: FileState
    chunks: tuple[ChunkLike, ...]
    vectors: FloatMatrix | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class StoreVectorIndex:
    """A scope's approximate vector index kept by the store (``IndexedVectors``): its vector
    size when one is ready (else None), and the scope's row count."""

    dims: int | None
    rows: int


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    workspace_id: str
    path: str
    ord: int
    start_line: int
    end_line: int
    text: str
    chunk_hash: str


# -- the history (recall) index ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HistoryUnit:
    """One indexed event. ``id`` is its seq; ``context`` is the text of the unit before it in
    the same session (a weak field: a reply is found by the question it answered)."""

    id: int
    workspace_id: str
    session_id: str
    turn: int | None
    role: str
    speaker: str
    ts: str
    content: str
    context: str = ""

    @property
    def length(self) -> int:
        """Its length in words, all fields (BM25's document length)."""
        return len(words(self.speaker)) + len(words(self.content)) + len(words(self.context))


# -- the memory search index ------------------------------------------------------------------

_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)
_HEX_ID = re.compile(r"(?=\d*[a-f])(?=[a-f]*\d)[0-9a-f]{8,}", re.I)
_MIXED_ID = re.compile(r"(?=.*[a-z]\d+[a-z])[0-9a-z]{8,}", re.I)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def readable_key(key: str) -> str:
    """A key as words for the embedder: ``db.engine`` is "db engine", ``preferredEditor``
    "preferred Editor". Parts that carry no words are left out (UUIDs, hex digests, ids that
    interleave letters and digits such as ULIDs), so a random key (LangMem names every memory
    with a UUID) cannot move the body's meaning: a UUID in front of "This project uses
    PostgreSQL 17" took its MiniLM cosine with "which database do we use" from 0.48 to between
    0.31 and 0.35, around the floor."""
    parts = runs(_UUID.sub(" ", key))  # any script's letters and digits stay
    kept = [p for p in parts if p and not _HEX_ID.fullmatch(p) and not _MIXED_ID.fullmatch(p)]
    return _CAMEL.sub(" ", " ".join(kept))


@dataclass(frozen=True, slots=True)
class MemoryUnit:
    """One indexed memory. ``workspace_id`` is '' for a user memory."""

    memory_id: str
    workspace_id: str
    key: str
    body: str

    @property
    def text(self) -> str:
        """What the embedder sees and what lexical evidence is measured on: the key's words
        (``readable_key``) and the body."""
        words = readable_key(self.key)
        return f"{words}: {self.body}" if words else self.body

    @property
    def length(self) -> int:
        """Its length in words, both fields (BM25's document length)."""
        return len(words(self.key)) + len(words(self.body))
