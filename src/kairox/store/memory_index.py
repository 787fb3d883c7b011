"""Where the memory search index lives: one unit per live memory (its key and body) with FTS5 and
vectors, on SQLite (the home database, or the local index file beside a Postgres store).

It is a ``RankStore``, so the workspace index's hybrid ranking runs over it unchanged. A scope is
one workspace: its workspace and session memories plus the user's (``workspace_id`` '' holds the
user's memories, which every workspace sees).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kairox.store.db import Database

USER_WORKSPACE = ""
FloatMatrix = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class MemoryUnit:
    """One indexed memory. ``workspace_id`` is '' for a user memory."""

    memory_id: str
    workspace_id: str
    key: str
    body: str

    @property
    def text(self) -> str:
        """What the embedder sees and what lexical evidence is measured on."""
        return f"{self.key}: {self.body}" if self.key else self.body


class SqliteMemoryIndexStore:
    """The memory index's tables (schema: ``kairox.store.schema.memory_index``)."""

    def __init__(self, db: Database, *, weights: tuple[float, float] = (0.6, 1.0)) -> None:
        self._db = db
        self.keyword_weights: tuple[float, ...] = weights  # (key, body)

    # -- writing ------------------------------------------------------------------------------

    def last_seq(self) -> int:
        row = self._db.query_one("SELECT last_seq FROM memory_index_state WHERE id = 1")
        return int(row[0]) if row else 0

    def apply(self, upserts: Sequence[MemoryUnit], deletes: Sequence[str], *, last_seq: int) -> int:
        """Write units (a changed key or body drops its vectors), delete the memory ids in
        ``deletes`` and move the watermark, in one transaction. Returns the units changed."""
        changed = 0
        with self._db.atomic() as conn:
            for memory_id in deletes:
                changed += conn.execute(
                    "DELETE FROM memory_units WHERE memory_id = ?", (memory_id,)
                ).rowcount
            for unit in upserts:
                row = conn.execute(
                    "SELECT id, workspace_id, key, body FROM memory_units WHERE memory_id = ?",
                    (unit.memory_id,),
                ).fetchone()
                if row is None:
                    conn.execute(
                        "INSERT INTO memory_units(memory_id, workspace_id, key, body) "
                        "VALUES (?, ?, ?, ?)",
                        (unit.memory_id, unit.workspace_id, unit.key, unit.body),
                    )
                elif (row[1], row[2], row[3]) != (unit.workspace_id, unit.key, unit.body):
                    conn.execute(
                        "UPDATE memory_units SET workspace_id = ?, key = ?, body = ? WHERE id = ?",
                        (unit.workspace_id, unit.key, unit.body, row[0]),
                    )
                    conn.execute("DELETE FROM memory_unit_vectors WHERE unit_id = ?", (row[0],))
                else:
                    continue
                changed += 1
            conn.execute(
                "INSERT INTO memory_index_state(id, last_seq, generation) VALUES (1, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq), "
                "generation = generation + excluded.generation",
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
        return [(int(r[0]), MemoryUnit(str(r[1]), str(r[2]), str(r[3]), str(r[4]))) for r in rows]

    def put_vectors(self, model: str, ids: Sequence[int], vectors: FloatMatrix) -> None:
        if not len(ids):
            return
        matrix = np.ascontiguousarray(vectors, dtype="<f4")
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} unit ids but vectors of shape {matrix.shape}")
        dims = int(matrix.shape[1])
        with self._db.atomic() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO memory_unit_vectors(unit_id, model, dims, vector) "
                "VALUES (?, ?, ?, ?)",
                [(i, model, dims, row.tobytes()) for i, row in zip(ids, matrix, strict=True)],
            )
            conn.execute("UPDATE memory_index_state SET generation = generation + 1")

    # -- reading (RankStore) --------------------------------------------------------------------

    def generation(self, workspace_id: str) -> int:
        row = self._db.query_one("SELECT generation FROM memory_index_state WHERE id = 1")
        return int(row[0]) if row else -1

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        rows = self._db.query(
            "SELECT v.unit_id, v.dims, v.vector FROM memory_unit_vectors v "
            "JOIN memory_units u ON u.id = v.unit_id "
            "WHERE v.model = ? AND u.workspace_id IN (?, ?) ORDER BY v.unit_id",
            (model, workspace_id, USER_WORKSPACE),
        )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        dims = int(rows[-1][1])
        rows = [r for r in rows if int(r[1]) == dims]
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(r[2] for r in rows)
        matrix = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), dims)
        return ids, matrix

    def keyword_keys(self, workspace_id: str) -> list[tuple[int, str]]:
        """The units of the workspace and the user, each versioned by its text."""
        rows = self._db.query(
            "SELECT id, key, body FROM memory_units WHERE workspace_id IN (?, ?)",
            (workspace_id, USER_WORKSPACE),
        )
        return [(int(r[0]), f"{r[1]}\0{r[2]}") for r in rows]

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
        return [(int(r[0]), (str(r[1]), str(r[2]))) for r in rows]

    def get_units(self, ids: Sequence[int]) -> dict[int, MemoryUnit]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._db.query(
            "SELECT id, memory_id, workspace_id, key, body FROM memory_units "
            f"WHERE id IN ({marks})",
            list(ids),
        )
        return {int(r[0]): MemoryUnit(str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows}
