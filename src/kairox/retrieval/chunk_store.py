"""Where the retrieval layer gets its chunk stores: the protocol and both backends' names.

The protocol and data types live in ``kairox.store.chunks`` (the storage layer owns every backend);
this module keeps the names retrieval code and tests import.
"""

from kairox.store.chunks import (
    ChunkStore,
    FileState,
    FileUpdate,
    IdArray,
    RankStore,
    StoredChunk,
)
from kairox.store.chunks_sqlite import SqliteChunkStore

__all__ = [
    "ChunkStore",
    "FileState",
    "FileUpdate",
    "IdArray",
    "RankStore",
    "SqliteChunkStore",
    "StoredChunk",
]
