"""The history (recall) index's data types and the SQL both backends share.

One unit per conversation event (a user message, a completed reply, a tool invocation), keyed by
the event's seq. Keyword ranking is the in-memory BM25 of ``kairox.retrieval.bm25``, fed by
``keyword_keys``/``keyword_documents`` of the scope searched (a workspace, or one session of it):
document frequencies, document count and average length are the scope's own, so another
workspace's traffic never changes a score, and both backends rank alike (the same SQL here feeds
both). Vectors are NumPy matrices on both backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kairox.store.records import HistoryUnit
from kairox.store.sql import SqlConnection, SqlDatabase, query_in
from kairox.store.vectors import FloatMatrix, IdArray, VectorReader, one_per_id

_SEP = "@"
UNIT_COLUMNS = "id, workspace_id, session_id, turn, role, speaker, ts, content, context"
# BM25 weights of the (speaker, content, context) fields: a reply is found by its own words
# first, by who said it and by the turn before it (its context) less.
FIELD_WEIGHTS = (0.5, 1.0, 0.3)


def history_scope(workspace_id: str, session_id: str | None = None) -> str:
    """The scope string of a workspace's whole history, or of one of its sessions."""
    return workspace_id if session_id is None else f"{workspace_id}{_SEP}{session_id}"


def parse_scope(scope: str) -> tuple[str, str | None]:
    workspace_id, sep, session_id = scope.partition(_SEP)
    return workspace_id, (session_id if sep else None)


class SqlHistoryStore:
    """``HistoryStore`` on a ``SqlDatabase``. Backends fill in ``_insert_unit``,
    ``_write_vectors`` and their ``VectorReader``."""

    _vectors: VectorReader

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self.keyword_weights: tuple[float, ...] = FIELD_WEIGHTS
        # The context field repeats the turn before: counting it towards a word's document
        # frequency would make every word said once look common.
        self.keyword_counted: tuple[bool, ...] = (True, True, False)

    # -- dialect hooks ------------------------------------------------------------------------

    def _insert_unit(self, conn: SqlConnection, unit: HistoryUnit) -> bool:
        """Insert the unit unless it is there; True when it was added."""
        raise NotImplementedError

    def _write_vectors(
        self, conn: SqlConnection, workspace_id: str, model: str, rows: list[tuple[int, Any]]
    ) -> None:
        raise NotImplementedError

    # -- writing ------------------------------------------------------------------------------

    def last_seq(self) -> int:
        row = self._db.query_one("SELECT last_seq FROM history_index_state WHERE id = 1")
        return int(row["last_seq"]) if row else 0

    def add_units(self, units: Sequence[HistoryUnit], *, last_seq: int) -> int:
        """Insert units (ignoring ones already there) and move the watermark, in one transaction."""
        added: dict[str, tuple[int, int]] = {}
        with self._db.atomic() as conn:
            for unit in units:
                if self._insert_unit(conn, unit):
                    units_before, length_before = added.get(unit.workspace_id, (0, 0))
                    added[unit.workspace_id] = (units_before + 1, length_before + unit.length)
            for workspace_id, (count, length) in added.items():
                conn.execute(
                    "INSERT INTO history_workspaces(workspace_id, generation, unit_count, "
                    "length_sum) VALUES (?, 1, ?, ?) ON CONFLICT(workspace_id) DO UPDATE SET "
                    "generation = history_workspaces.generation + 1, "
                    "unit_count = history_workspaces.unit_count + excluded.unit_count, "
                    "length_sum = history_workspaces.length_sum + excluded.length_sum",
                    (workspace_id, count, length),
                )
            conn.execute(
                "INSERT INTO history_index_state(id, last_seq) VALUES (1, ?) "
                "ON CONFLICT(id) DO UPDATE SET last_seq = CASE WHEN excluded.last_seq > "
                "history_index_state.last_seq THEN excluded.last_seq "
                "ELSE history_index_state.last_seq END",
                (last_seq,),
            )
        return sum(count for count, _ in added.values())

    def last_unit(self, session_id: str) -> HistoryUnit | None:
        row = self._db.query_one(
            f"SELECT {UNIT_COLUMNS} FROM history_units WHERE session_id = ? "
            "ORDER BY id DESC LIMIT 1",
            (session_id,),
        )
        return _unit(row) if row else None

    def unit_count(self, workspace_id: str | None = None) -> int:
        if workspace_id is None:
            row = self._db.query_one(
                "SELECT coalesce(sum(unit_count), 0) AS n FROM history_workspaces"
            )
        else:
            row = self._db.query_one(
                "SELECT unit_count AS n FROM history_workspaces WHERE workspace_id = ?",
                (workspace_id,),
            )
        return int(row["n"]) if row else 0

    def units_missing_vectors(
        self, workspace_id: str, model: str, *, after_id: int = 0, limit: int
    ) -> list[HistoryUnit]:
        """Units with id > ``after_id`` lacking a vector for ``model``, by id (a cursor, so a
        catch-up never rescans what it already embedded)."""
        rows = self._db.query(
            f"SELECT {UNIT_COLUMNS} FROM history_units u WHERE u.workspace_id = ? AND u.id > ? "
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
        matrix = one_per_id(ids, vectors)
        with self._db.atomic() as conn:
            self._write_vectors(
                conn,
                workspace_id,
                model,
                [(int(i), row) for i, row in zip(ids, matrix, strict=True)],
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
        return int(row["generation"]) if row else -1

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        return self.load_vectors_after(workspace_id, model, 0)

    def load_vectors_after(
        self, scope: str, model: str, after_id: int
    ) -> tuple[IdArray, FloatMatrix]:
        """The scope's vectors for ``model`` with unit id > ``after_id``, by id."""
        workspace_id, session_id = parse_scope(scope)
        sql = (
            f"SELECT v.unit_id AS id, v.dims, {self._vectors.column} AS vec FROM history_vectors v "
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
        return self._vectors.newest(self._db.query(sql + " ORDER BY v.unit_id", params))

    def keyword_keys(self, workspace_id: str) -> list[tuple[int, str]]:
        """The scope's unit ids (a unit never changes, so its version is empty)."""
        where, params = _where(workspace_id)
        rows = self._db.query(f"SELECT u.id FROM history_units u WHERE {where}", params)
        return [(int(r["id"]), "") for r in rows]

    def keyword_documents(
        self, workspace_id: str, ids: Sequence[int] | None = None, *, after_id: int = 0
    ) -> list[tuple[int, tuple[str, ...]]]:
        """(id, (speaker, content, context)) of the scope's units ``ids``, or of every one
        above ``after_id``, by id."""
        where, params = _where(workspace_id)
        sql = f"SELECT u.id, u.speaker, u.content, u.context FROM history_units u WHERE {where}"
        if ids is None:
            rows = self._db.query(f"{sql} AND u.id > ? ORDER BY u.id", [*params, after_id])
        else:
            rows = query_in(self._db, sql + " AND u.id IN ({ids}) ORDER BY u.id", params, ids)
        return [
            (int(r["id"]), (str(r["speaker"]), str(r["content"]), str(r["context"]))) for r in rows
        ]

    def unit_sessions(self, workspace_id: str, *, after_id: int = 0) -> list[tuple[int, str]]:
        """(unit id, session id) of the workspace's units above ``after_id``, by id (what the
        recall's session documents group by)."""
        rows = self._db.query(
            "SELECT u.id, u.session_id FROM history_units u WHERE u.workspace_id = ? "
            "AND u.id > ? ORDER BY u.id",
            (parse_scope(workspace_id)[0], after_id),
        )
        return [(int(r["id"]), str(r["session_id"])) for r in rows]

    def get_units(self, ids: Sequence[int]) -> list[HistoryUnit]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._db.query(
            f"SELECT {UNIT_COLUMNS} FROM history_units WHERE id IN ({marks})", list(ids)
        )
        by_id = {int(r["id"]): _unit(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def session_names(self, session_ids: Sequence[str]) -> dict[str, str]:
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._db.query(f"SELECT id, name FROM sessions WHERE id IN ({marks})", ids)
        return {str(r["id"]): str(r["name"]) for r in rows}


def _where(scope: str) -> tuple[str, list[object]]:
    workspace_id, session_id = parse_scope(scope)
    if session_id is None:
        return "u.workspace_id = ?", [workspace_id]
    return "u.session_id = ? AND u.workspace_id = ?", [session_id, workspace_id]


def _unit(row: Any) -> HistoryUnit:
    turn = row["turn"]
    return HistoryUnit(
        id=int(row["id"]),
        workspace_id=str(row["workspace_id"]),
        session_id=str(row["session_id"]),
        turn=int(turn) if turn is not None else None,
        role=str(row["role"]),
        speaker=str(row["speaker"]),
        ts=str(row["ts"]),
        content=str(row["content"]),
        context=str(row["context"]),
    )
