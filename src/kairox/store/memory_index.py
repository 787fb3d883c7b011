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

from collections.abc import Sequence
from typing import Any

from kairox.store.keyword_snapshots import KeywordSnapshot, SqlKeywordSnapshots
from kairox.store.records import MemoryUnit
from kairox.store.sql import SqlConnection, SqlDatabase, query_in
from kairox.store.vectors import FloatMatrix, IdArray, VectorReader, one_per_id

USER_WORKSPACE = ""
# BM25 weights of the (key, body) fields.
FIELD_WEIGHTS = (0.6, 1.0)
SCOPE = "u.workspace_id IN (?, ?)"


class SqlMemoryIndexStore(SqlKeywordSnapshots):
    """``MemoryIndexStore`` on a ``SqlDatabase``. Backends fill in ``_insert_unit``,
    ``_write_vectors`` and their ``VectorReader``."""

    _vectors: VectorReader
    snapshot_kind = "memories"

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self.keyword_weights: tuple[float, ...] = FIELD_WEIGHTS  # (key, body)

    # -- dialect hooks ------------------------------------------------------------------------

    def _insert_unit(self, conn: SqlConnection, unit: MemoryUnit) -> None:
        raise NotImplementedError

    def _update_unit(self, conn: SqlConnection, unit_id: int, unit: MemoryUnit) -> None:
        conn.execute(
            "UPDATE memory_units SET workspace_id = ?, key = ?, body = ?, length = ? WHERE id = ?",
            (unit.workspace_id, unit.key, unit.body, unit.length, unit_id),
        )

    def _write_vectors(self, conn: SqlConnection, model: str, rows: list[tuple[int, Any]]) -> None:
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

    def count_missing_vectors(self, model: str) -> int:
        """Units without a vector of ``model``: two counts (a vector belongs to one unit and
        goes with it), not a scan for the missing ones."""
        row = self._db.query_one(
            "SELECT (SELECT count(*) FROM memory_units) - (SELECT count(*) FROM "
            "memory_unit_vectors WHERE model = ?) AS n",
            (model,),
        )
        return int(row["n"]) if row else 0

    def embedded_at(self, model: str) -> int | None:
        """The generation at which every unit last had a vector of ``model`` (``mark_embedded``),
        or None: one row read, where counting the missing vectors reads them all."""
        row = self._db.query_one(
            "SELECT generation FROM memory_index_embedded WHERE model = ?", (model,)
        )
        return int(row["generation"]) if row else None

    def mark_embedded(self, model: str, generation: int) -> None:
        """Record that no unit lacked a vector of ``model`` at ``generation`` (read before the
        count that found none, so a unit added since moved the generation past it)."""
        with self._db.atomic() as conn:
            conn.execute(
                "INSERT INTO memory_index_embedded(model, generation) VALUES (?, ?) "
                "ON CONFLICT(model) DO UPDATE SET generation = excluded.generation",
                (model, generation),
            )

    def units_missing_vectors(
        self, model: str, *, limit: int, after_id: int = 0
    ) -> list[tuple[int, MemoryUnit]]:
        """Up to ``limit`` units after ``after_id`` without a vector of ``model``, by id (a
        caller walks them with ``after_id``, so each batch reads on from the last)."""
        rows = self._db.query(
            "SELECT u.id, u.memory_id, u.workspace_id, u.key, u.body FROM memory_units u "
            "WHERE u.id > ? AND NOT EXISTS (SELECT 1 FROM memory_unit_vectors v "
            "WHERE v.model = ? AND v.unit_id = u.id) ORDER BY u.id LIMIT ?",
            (after_id, model, limit),
        )
        return [(int(r["id"]), _unit(r)) for r in rows]

    def put_vectors(self, model: str, ids: Sequence[int], vectors: FloatMatrix) -> None:
        if not len(ids):
            return
        matrix = one_per_id(ids, vectors)
        with self._db.atomic() as conn:
            self._write_vectors(
                conn, model, [(int(i), row) for i, row in zip(ids, matrix, strict=True)]
            )
            conn.execute("UPDATE memory_index_state SET generation = generation + 1")

    # -- reading (RankStore) --------------------------------------------------------------------

    def load_keyword_snapshot(self, scope: str) -> KeywordSnapshot | None:
        """The scope's saved keyword index; a workspace without one starts from the user's
        (the memories every workspace sees), at a generation no store has, so the ranker
        catches the workspace's own memories up by their keys instead of building the
        user's again."""
        found = super().load_keyword_snapshot(scope)
        if found is not None or scope == USER_WORKSPACE:
            return found
        base = super().load_keyword_snapshot(USER_WORKSPACE)
        return KeywordSnapshot(-2, base.data) if base is not None else None

    def generation(self, workspace_id: str) -> int:
        row = self._db.query_one("SELECT generation FROM memory_index_state WHERE id = 1")
        return int(row["generation"]) if row else -1

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        rows = self._db.query(
            f"SELECT v.unit_id AS id, v.dims, {self._vectors.column} AS vec "
            "FROM memory_unit_vectors v "
            f"JOIN memory_units u ON u.id = v.unit_id WHERE v.model = ? AND {SCOPE} "
            "ORDER BY v.unit_id",
            [model, workspace_id, USER_WORKSPACE],
        )
        return self._vectors.newest(rows)

    def load_vectors_of(
        self, workspace_id: str, model: str, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix] | None:
        """The vectors of ``model`` of these units (those that have one), by id; None when
        they are not all one size. (Units are read by id: their ids are the scope's already.)"""
        sql = (
            f"SELECT v.unit_id AS id, v.dims, {self._vectors.column} AS vec "
            "FROM memory_unit_vectors v WHERE v.model = ? AND v.unit_id IN ({ids}) "
            "ORDER BY v.unit_id"
        )
        return self._vectors.one_size(query_in(self._db, sql, (model,), ids))

    def has_own_units(self, workspace_id: str) -> bool:
        """Whether the workspace holds memories of its own (else its scope is the user's)."""
        if workspace_id == USER_WORKSPACE:
            return False
        row = self._db.query_one(
            "SELECT 1 AS found FROM memory_units WHERE workspace_id = ? LIMIT 1", (workspace_id,)
        )
        return row is not None

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
            rows = query_in(
                self._db,
                sql + " AND id IN ({ids}) ORDER BY id",
                (workspace_id, USER_WORKSPACE),
                ids,
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
