"""The ``ChunkStore`` protocol and its data types: where workspace chunks live, on any backend.

The indexer writes through it and the hybrid searcher reads through it. Backends: SQLite
(``kairox.retrieval.chunk_store.SqliteChunkStore``, FTS5 + vectors searched in NumPy) and Postgres
(``kairox.store.postgres.chunks``, ``tsvector`` + pgvector HNSW, searched in the database through
``NativeHybridSearch``). Every method takes the ``workspace_id`` explicitly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

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

    def generation(self, workspace_id: str) -> int: ...
    def corpus_state(self) -> tuple[int, int]: ...
    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]: ...
    def keyword_search(
        self, workspace_id: str, match: str, *, limit: int
    ) -> list[tuple[int, float]]: ...
    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]: ...


class ChunkStore(RankStore, Protocol):
    """Persistence of files, chunks, keyword index and vectors for workspace retrieval."""

    def ensure_workspace(self, workspace_id: str, root: str) -> None: ...
    def chunker(self, workspace_id: str) -> str: ...
    def set_chunker(self, workspace_id: str, signature: str) -> None: ...
    def generation(self, workspace_id: str) -> int: ...
    def chunk_count(self, workspace_id: str) -> int: ...
    def corpus_state(self) -> tuple[int, int]: ...
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
    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]: ...
    def keyword_search(
        self, workspace_id: str, match: str, *, limit: int
    ) -> list[tuple[int, float]]: ...
    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]: ...
    def get_chunks(self, workspace_id: str, ids: Sequence[int]) -> list[StoredChunk]: ...


@dataclass(frozen=True, slots=True)
class NativeHit:
    """A candidate of a database-side hybrid search, with its chunk and both raw scores."""

    chunk: StoredChunk
    keyword: float | None
    cosine: float | None


@runtime_checkable
class NativeHybridSearch(Protocol):
    """A ``ChunkStore`` that ranks keyword and vector candidates itself, in one round trip."""

    def hybrid_candidates(
        self,
        workspace_id: str,
        terms: Sequence[str],
        vector: FloatMatrix | None,
        model: str,
        *,
        limit: int,
    ) -> list[NativeHit]:
        """Up to ``limit`` keyword and ``limit`` vector candidates (union), with their chunks."""
        ...
