"""Where the history index lives: the ``HistoryStore`` protocol and its SQLite implementation.

The history index keeps one unit per conversation event (a user message, a completed reply, a
tool invocation) with its seq, session, turn, role, speaker and time. It is a ``RankStore``, so
the workspace index's hybrid ranking runs over it unchanged. A scope is a workspace, or one
session of it (``history_scope``). Another backend (Postgres) implements this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kairox.retrieval.chunk_store import IdArray, RankStore
from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.store.db import Database

_SEP = "@"


def history_scope(workspace_id: str, session_id: str | None = None) -> str:
    """The scope string of a workspace's whole history, or of one of its sessions."""
    return workspace_id if session_id is None else f"{workspace_id}{_SEP}{session_id}"


def parse_scope(scope: str) -> tuple[str, str | None]:
    workspace_id, sep, session_id = scope.partition(_SEP)
    return workspace_id, (session_id if sep else None)


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


class HistoryStore(RankStore, Protocol):
    """Persistence of history units, their keyword index and vectors."""

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
    def get_units(self, ids: Sequence[int]) -> list[HistoryUnit]: ...


_COLUMNS = "id, workspace_id, session_id, turn, role, speaker, ts, content, context"


class SqliteHistoryStore:
    """``HistoryStore`` on the home database (schema: ``kairox.store.schema.history``).

    ``weights`` are the BM25 weights of the (speaker, content, context) columns.
    """

    def __init__(
        self, db: Database, *, weights: tuple[float, float, float] = (0.5, 1.0, 0.3)
    ) -> None:
        self._db = db
        self._weights = weights
        self.keyword_weights: tuple[float, ...] = weights  # (speaker, content, context)

    # -- writing ------------------------------------------------------------------------------

    def last_seq(self) -> int:
        row = self._db.query_one("SELECT last_seq FROM history_index_state WHERE id = 1")
        return int(row[0]) if row else 0

    def add_units(self, units: Sequence[HistoryUnit], *, last_seq: int) -> int:
        """Insert units (ignoring ones already there) and move the watermark, in one transaction."""
        added: dict[str, int] = {}
        with self._db.atomic() as conn:
            for unit in units:
                cursor = conn.execute(
                    f"INSERT OR IGNORE INTO history_units({_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        unit.id, unit.workspace_id, unit.session_id, unit.turn, unit.role,
                        unit.speaker, unit.ts, unit.content, unit.context,
                    ),
                )  # fmt: skip
                if cursor.rowcount > 0:
                    added[unit.workspace_id] = added.get(unit.workspace_id, 0) + 1
            for workspace_id, count in added.items():
                conn.execute(
                    "INSERT INTO history_workspaces(workspace_id, generation, unit_count) "
                    "VALUES (?, 1, ?) ON CONFLICT(workspace_id) DO UPDATE SET "
                    "generation = generation + 1, unit_count = unit_count + excluded.unit_count",
                    (workspace_id, count),
                )
            conn.execute(
                "INSERT INTO history_index_state(id, last_seq) VALUES (1, ?) "
                "ON CONFLICT(id) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq)",
                (last_seq,),
            )
        return sum(added.values())

    def last_unit(self, session_id: str) -> HistoryUnit | None:
        row = self._db.query_one(
            f"SELECT {_COLUMNS} FROM history_units WHERE session_id = ? ORDER BY id DESC LIMIT 1",
            (session_id,),
        )
        return _unit(row) if row else None

    def unit_count(self, workspace_id: str | None = None) -> int:
        if workspace_id is None:
            row = self._db.query_one("SELECT coalesce(sum(unit_count), 0) FROM history_workspaces")
        else:
            row = self._db.query_one(
                "SELECT unit_count FROM history_workspaces WHERE workspace_id = ?",
                (workspace_id,),
            )
        return int(row[0]) if row else 0

    def units_missing_vectors(
        self, workspace_id: str, model: str, *, after_id: int = 0, limit: int
    ) -> list[HistoryUnit]:
        """Units with id > ``after_id`` lacking a vector for ``model``, by id (a cursor, so a
        catch-up never rescans what it already embedded)."""
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM history_units u WHERE u.workspace_id = ? AND u.id > ? "
            "AND NOT EXISTS (SELECT 1 FROM history_vectors v WHERE v.workspace_id = "
            "u.workspace_id AND v.model = ? AND v.unit_id = u.id) ORDER BY u.id LIMIT ?",
            (workspace_id, after_id, model, limit),
        )
        return [_unit(r) for r in rows]

    def put_vectors(
        self, workspace_id: str, model: str, ids: Sequence[int], vectors: FloatMatrix
    ) -> None:
        if not len(ids):
            return
        matrix = np.ascontiguousarray(vectors, dtype="<f4")
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} unit ids but vectors of shape {matrix.shape}")
        dims = int(matrix.shape[1])
        with self._db.atomic() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO history_vectors(workspace_id, model, unit_id, dims, "
                "vector) VALUES (?, ?, ?, ?, ?)",
                [
                    (workspace_id, model, i, dims, row.tobytes())
                    for i, row in zip(ids, matrix, strict=True)
                ],
            )
            conn.execute(
                "UPDATE history_workspaces SET generation = generation + 1 WHERE workspace_id = ?",
                (workspace_id,),
            )

    # -- reading (RankStore) --------------------------------------------------------------------

    def generation(self, workspace_id: str) -> int:
        row = self._db.query_one(
            "SELECT generation FROM history_workspaces WHERE workspace_id = ?",
            (parse_scope(workspace_id)[0],),
        )
        return int(row[0]) if row else -1

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        return self.load_vectors_after(workspace_id, model, 0)

    def load_vectors_after(
        self, scope: str, model: str, after_id: int
    ) -> tuple[IdArray, FloatMatrix]:
        """The scope's vectors for ``model`` with unit id > ``after_id``, by id."""
        workspace_id, session_id = parse_scope(scope)
        sql = (
            "SELECT v.unit_id, v.dims, v.vector FROM history_vectors v "
            "WHERE v.workspace_id = ? AND v.model = ? AND v.unit_id > ?"
        )
        params: list[object] = [workspace_id, model, after_id]
        if session_id is not None:
            sql = sql.replace(
                "FROM history_vectors v",
                "FROM history_vectors v JOIN history_units u ON u.id = v.unit_id",
            )
            sql += " AND u.session_id = ?"
            params.append(session_id)
        rows = self._db.query(sql + " ORDER BY v.unit_id", params)
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        dims = int(rows[-1][1])
        rows = [r for r in rows if int(r[1]) == dims]
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(r[2] for r in rows)
        matrix = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), dims)
        return ids, matrix

    def keyword_keys(self, workspace_id: str) -> list[tuple[int, str]]:
        """The scope's unit ids (a unit never changes, so its version is empty)."""
        scope_ws, session_id = parse_scope(workspace_id)
        where = "workspace_id = ?" if session_id is None else "session_id = ?"
        rows = self._db.query(
            f"SELECT id FROM history_units WHERE {where}",
            (scope_ws if session_id is None else session_id,),
        )
        return [(int(r[0]), "") for r in rows]

    def keyword_documents(
        self, workspace_id: str, ids: Sequence[int] | None = None, *, after_id: int = 0
    ) -> list[tuple[int, tuple[str, ...]]]:
        """(id, (speaker, content, context)) of the scope's units ``ids``, or of every one
        above ``after_id``, by id."""
        scope_ws, session_id = parse_scope(workspace_id)
        where = "workspace_id = ?" if session_id is None else "session_id = ?"
        sql = f"SELECT id, speaker, content, context FROM history_units WHERE {where}"
        key = scope_ws if session_id is None else session_id
        if ids is None:
            rows = self._db.query(f"{sql} AND id > ? ORDER BY id", (key, after_id))
        else:
            rows = []
            wanted = sorted(ids)
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows += self._db.query(f"{sql} AND id IN ({marks}) ORDER BY id", (key, *part))
        return [(int(r[0]), (str(r[1]), str(r[2]), str(r[3]))) for r in rows]

    def get_units(self, ids: Sequence[int]) -> list[HistoryUnit]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._db.query(f"SELECT {_COLUMNS} FROM history_units WHERE id IN ({marks})", ids)
        by_id = {int(r[0]): _unit(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]


def _unit(row: Sequence[object]) -> HistoryUnit:
    turn = row[3]
    return HistoryUnit(
        id=int(str(row[0])),
        workspace_id=str(row[1]),
        session_id=str(row[2]),
        turn=int(str(turn)) if turn is not None else None,
        role=str(row[4]),
        speaker=str(row[5]),
        ts=str(row[6]),
        content=str(row[7]),
        context=str(row[8]),
    )
