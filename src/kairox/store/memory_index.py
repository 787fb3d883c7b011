"""The memory search index's data types and the SQL both backends share.

One unit per live memory (its key and body) with a keyword index and vectors, in the store's own
database (SQLite or Postgres). It is a ``RankStore``, so the workspace index's hybrid ranking runs
over it unchanged. A scope is one workspace: its workspace and session memories plus the user's
(``workspace_id`` '' holds the user's memories, which every workspace sees).

Keyword ranking is the in-memory BM25 of ``kairox.retrieval.bm25`` (as the history index's and
the chunks'), fed by ``keyword_keys``/``keyword_documents`` with the scope's own statistics, so
both backends rank alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kairox.store.chunks import FloatMatrix, IdArray
from kairox.store.sql import SqlConnection, SqlDatabase
from kairox.store.words import runs, words

USER_WORKSPACE = ""
# BM25 weights of the (key, body) fields.
FIELD_WEIGHTS = (0.6, 1.0)
SCOPE = "u.workspace_id IN (?, ?)"
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


class SqlMemoryIndexStore:
    """``MemoryIndexStore`` on a ``SqlDatabase``. Backends fill in ``_insert_unit``,
    ``_update_unit`` and the vector hooks."""

    _VECTOR = "v.vector"

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self.keyword_weights: tuple[float, ...] = FIELD_WEIGHTS  # (key, body)

    # -- dialect hooks ------------------------------------------------------------------------

    def _insert_unit(self, conn: SqlConnection, unit: MemoryUnit) -> None:
        raise NotImplementedError

    def _update_unit(self, conn: SqlConnection, unit_id: int, unit: MemoryUnit) -> None:
        raise NotImplementedError

    def _write_vectors(self, conn: SqlConnection, model: str, rows: list[tuple[int, Any]]) -> None:
        raise NotImplementedError

    def _vector_rows(self, sql: str, params: list[object]) -> list[tuple[int, int, FloatMatrix]]:
        """(unit id, dims, vector) rows of a ``SELECT v.unit_id, v.dims, <vector>`` query."""
        raise NotImplementedError

    # -- writing ------------------------------------------------------------------------------

    def last_seq(self) -> int:
        row = self._db.query_one("SELECT last_seq FROM memory_index_state WHERE id = 1")
        return int(row["last_seq"]) if row else 0

    def apply(self, upserts: Sequence[MemoryUnit], deletes: Sequence[str], *, last_seq: int) -> int:
        """Write units (a changed key or body drops its vectors), delete the memory ids in
        ``deletes`` and move the watermark, in one transaction. Returns the units changed."""
        changed = 0
        with self._db.atomic() as conn:
            for memory_id in deletes:
                changed += int(
                    conn.execute(
                        "DELETE FROM memory_units WHERE memory_id = ?", (memory_id,)
                    ).rowcount
                )
            for unit in upserts:
                row = conn.execute(
                    "SELECT id, workspace_id, key, body FROM memory_units WHERE memory_id = ?",
                    (unit.memory_id,),
                ).fetchone()
                if row is None:
                    self._insert_unit(conn, unit)
                elif (row["workspace_id"], row["key"], row["body"]) != (
                    unit.workspace_id,
                    unit.key,
                    unit.body,
                ):
                    self._update_unit(conn, int(row["id"]), unit)
                    conn.execute(
                        "DELETE FROM memory_unit_vectors WHERE unit_id = ?", (int(row["id"]),)
                    )
                else:
                    continue
                changed += 1
            conn.execute(
                "INSERT INTO memory_index_state(id, last_seq, generation) VALUES (1, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET last_seq = CASE WHEN excluded.last_seq > "
                "memory_index_state.last_seq THEN excluded.last_seq "
                "ELSE memory_index_state.last_seq END, "
                "generation = memory_index_state.generation + excluded.generation",
                (last_seq, 1 if changed else 0),
            )
        return changed

    def units_missing_vectors(self, model: str, *, limit: int) -> list[tuple[int, MemoryUnit]]:
        rows = self._db.query(
            "SELECT u.id, u.memory_id, u.workspace_id, u.key, u.body FROM memory_units u "
            "WHERE NOT EXISTS (SELECT 1 FROM memory_unit_vectors v WHERE v.model = ? "
            "AND v.unit_id = u.id) ORDER BY u.id LIMIT ?",
            (model, limit),
        )
        return [(int(r["id"]), _unit(r)) for r in rows]

    def put_vectors(self, model: str, ids: Sequence[int], vectors: FloatMatrix) -> None:
        if not len(ids):
            return
        matrix = np.ascontiguousarray(vectors, dtype="<f4")
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} unit ids but vectors of shape {matrix.shape}")
        with self._db.atomic() as conn:
            self._write_vectors(
                conn, model, [(int(i), row) for i, row in zip(ids, matrix, strict=True)]
            )
            conn.execute("UPDATE memory_index_state SET generation = generation + 1")

    # -- reading (RankStore) --------------------------------------------------------------------

    def generation(self, workspace_id: str) -> int:
        row = self._db.query_one("SELECT generation FROM memory_index_state WHERE id = 1")
        return int(row["generation"]) if row else -1

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        rows = self._vector_rows(
            f"SELECT v.unit_id, v.dims, {self._VECTOR} AS vec FROM memory_unit_vectors v "
            f"JOIN memory_units u ON u.id = v.unit_id WHERE v.model = ? AND {SCOPE} "
            "ORDER BY v.unit_id",
            [model, workspace_id, USER_WORKSPACE],
        )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        dims = rows[-1][1]
        rows = [r for r in rows if r[1] == dims]
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.stack([r[2] for r in rows]).astype(np.float32).reshape(len(rows), dims)
        return ids, matrix

    def keyword_keys(self, workspace_id: str) -> list[tuple[int, str]]:
        """The units of the workspace and the user, each versioned by its text."""
        rows = self._db.query(
            "SELECT id, key, body FROM memory_units WHERE workspace_id IN (?, ?)",
            (workspace_id, USER_WORKSPACE),
        )
        return [(int(r["id"]), f"{r['key']}\0{r['body']}") for r in rows]

    def keyword_documents(
        self, workspace_id: str, ids: Sequence[int] | None = None, *, after_id: int = 0
    ) -> list[tuple[int, tuple[str, ...]]]:
        """(id, (key, body)) of the workspace's and the user's units, by id."""
        sql = "SELECT id, key, body FROM memory_units WHERE workspace_id IN (?, ?)"
        if ids is None:
            rows = self._db.query(
                f"{sql} AND id > ? ORDER BY id", (workspace_id, USER_WORKSPACE, after_id)
            )
        else:
            rows = []
            wanted = sorted(ids)
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows += self._db.query(
                    f"{sql} AND id IN ({marks}) ORDER BY id", (workspace_id, USER_WORKSPACE, *part)
                )
        return [(int(r["id"]), (str(r["key"]), str(r["body"]))) for r in rows]

    def get_units(self, ids: Sequence[int]) -> dict[int, MemoryUnit]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._db.query(
            "SELECT id, memory_id, workspace_id, key, body FROM memory_units "
            f"WHERE id IN ({marks})",
            list(ids),
        )
        return {int(r["id"]): _unit(r) for r in rows}


def _unit(row: Any) -> MemoryUnit:
    return MemoryUnit(
        str(row["memory_id"]), str(row["workspace_id"]), str(row["key"]), str(row["body"])
    )
