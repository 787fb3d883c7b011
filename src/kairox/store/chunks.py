"""The data types of ``ChunkStore`` (``kairox.store.protocols``): workspace chunks, any backend.

The indexer writes through it and the hybrid searcher reads through it: the keyword feed
(``keyword_keys``, ``keyword_documents``) and the vectors, which it ranks in memory. Backends:
SQLite (``kairox.store.chunks_sqlite.SqliteChunkStore``) and Postgres
(``kairox.store.postgres.chunks``). Every method takes the ``workspace_id`` explicitly.
"""

from __future__ import annotations

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
