"""The ``ChunkStore`` protocol and its data types: where workspace chunks live, on any backend.

The indexer writes through it and the hybrid searcher reads through it: the keyword feed
(``keyword_keys``, ``keyword_documents``) and the vectors, which it ranks in memory. Backends:
SQLite (``kairox.retrieval.chunk_store.SqliteChunkStore``) and Postgres
(``kairox.store.postgres.chunks``). Every method takes the ``workspace_id`` explicitly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]


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


IdArray = npt.NDArray[np.int64]


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
class StoredChunk:
    id: int
    workspace_id: str
    path: str
    ord: int
    start_line: int
    end_line: int
    text: str
    chunk_hash: str


class RankStore(Protocol):
    """What hybrid ranking reads: a keyword index, vectors and versions, per scope (workspace
    chunks, or a session's history in ``kairox.retrieval.history_store``)."""

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


class ChunkStore(RankStore, Protocol):
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
