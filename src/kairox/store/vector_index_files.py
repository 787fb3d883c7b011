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
import io
import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # NumPy is imported by the functions that use it: ``kairox memory list``
    import numpy.typing as npt  # opens a chunk store and must not pay for it

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


def named_file(table: Path, key: str) -> str | None:
    """The file a saved table (an ``.npz`` with a JSON ``meta``) names under ``key``; None when
    there is no readable table."""
    import numpy as np

    try:
        with np.load(table, allow_pickle=False) as arrays:
            return str(json.loads(arrays["meta"].tobytes().decode())[key])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_table(table: Path, version: int) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A table ``publish`` wrote: its meta and every array, read; None when its ``format`` is
    not ``version``. A damaged file raises what NumPy raises (OSError, ValueError, KeyError)."""
    import numpy as np

    with np.load(table, allow_pickle=False) as loaded:
        meta: dict[str, Any] = json.loads(loaded["meta"].tobytes().decode())
        if meta.get("format") != version:
            return None
        return meta, {name: loaded[name] for name in loaded.files if name != "meta"}


def publish(
    table: Path,
    payload: Path,
    meta: Mapping[str, object],
    arrays: Mapping[str, npt.NDArray[Any]],
    *,
    key: str,
    orphans: str,
) -> None:
    """Make ``table`` (``meta``, naming ``payload`` under ``key``, and ``arrays``) replace the
    old one atomically, then remove the payload the old table named (or, when none read, every
    other file of ``orphans``, a glob in the table's folder): a reader never pairs a table with
    another save's payload, and a save leaves no orphan."""
    import numpy as np

    previous = named_file(table, key)
    buffer = io.BytesIO()
    encoded = np.frombuffer(json.dumps({**meta, key: payload.name}).encode(), dtype=np.uint8)
    savez: Any = np.savez  # its stub types ``**arrays`` as its own keyword arguments
    savez(buffer, meta=encoded, **arrays)
    partial = table.with_name(f"{table.name}.{uuid.uuid4().hex[:12]}.part")
    partial.write_bytes(buffer.getvalue())
    os.replace(partial, table)
    if previous is not None:
        stale = [table.parent / previous] if previous != payload.name else []
    else:
        stale = [p for p in table.parent.glob(orphans) if p != payload]
    for old in stale:
        old.unlink(missing_ok=True)
