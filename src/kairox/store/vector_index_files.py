"""Where a store keeps its scopes' saved approximate vector indexes (``kairox.retrieval.ann``).

An HNSW index of a million 384-d chunks is about 1.7 GB: more than SQLite's largest BLOB (1 GB),
and written and read through the database it would be copied three times. So the SQLite chunk
store keeps each (scope, model)'s index as files in a folder beside its database, and the store
only says where (``VectorIndexFiles``); the files' format is the ranker's. A store that keeps no
such files (Postgres: pgvector's own HNSW index persists in the database) does not implement the
protocol. The files are derived data: a missing, older, foreign or unreadable one costs a
rebuild, never a result, and the ranker checks a sample of its rows against the store before
trusting it (a database made anew beside old files reads as foreign).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

FOLDER = "vector-indexes"


@dataclass(frozen=True, slots=True)
class IndexFiles:
    """The files of one saved index: ``stem`` plus the suffixes the ranker writes, in
    ``folder``; ``writable`` is False in a read-only home (the index is read, never saved)."""

    folder: Path
    stem: str
    writable: bool

    def path(self, suffix: str) -> Path:
        return self.folder / f"{self.stem}{suffix}"


@runtime_checkable
class VectorIndexFiles(Protocol):
    """A ``RankStore`` that keeps its scopes' approximate vector indexes between processes."""

    def vector_index_files(self, scope: str, model: str) -> IndexFiles | None:
        """Where the index of ``scope``'s vectors of ``model`` is saved; None for nowhere."""
        ...


def index_files(database: str, readonly: bool, kind: str, scope: str, model: str) -> IndexFiles:
    """The files of (kind, scope, model) beside the database file at ``database`` (named by
    the database file too: two databases in one folder keep apart)."""
    name = Path(database).name
    digest = hashlib.sha256(f"{name}\0{kind}\0{scope}\0{model}".encode()).hexdigest()[:24]
    return IndexFiles(Path(database).parent / FOLDER, f"{kind}-{digest}", not readonly)
