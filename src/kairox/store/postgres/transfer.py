"""``kairox migrate --to postgresql://...``: copy a SQLite home into Postgres, losslessly and again.

Every table is copied by its primary key with ``ON CONFLICT``, so a re-run copies nothing twice
(rows that change in place, such as a memory's status, are updated). Events keep their ``seq``
and go in seq order; chunks keep their ids so vectors and the FTS side stay attached; afterwards
the serial counters move past the copied ids. A target whose log is not a prefix of this home's
is refused before anything is written. The report holds a per-table count check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kairox.core.errors import StoreError
from kairox.store.db import Database
from kairox.store.postgres.db import PgDatabase
from kairox.store.postgres.vectors import vector_literal

BATCH = 1000
# (table, columns, conflict target, columns updated on conflict)
_TABLES: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    ("workspaces", ("id", "path", "created_at"), "id", ()),
    (
        "events",
        ("seq", "ts", "session_id", "workspace_id", "type", "schema_version", "payload"),
        "seq",
        (),
    ),
    ("event_tokens", ("seq", "tokenizer", "tokens"), "seq, tokenizer", ()),
    (
        "sessions",
        ("id", "name", "workspace_id", "profile", "created_at", "started_seq", "archived"),
        "id",
        ("profile", "archived"),
    ),
    (
        "memories",
        (
            "id", "scope", "owner", "workspace_id", "session_id", "key", "body", "status",
            "version", "created_at", "updated_at", "approved_at", "decided_by",
            "decision_reason", "proposed_session_id", "proposed_turn", "untrusted_inputs",
            "proposed_seq",
        ),
        "id",
        (
            "body", "status", "version", "updated_at", "approved_at", "decided_by",
            "decision_reason", "proposed_session_id", "proposed_turn", "untrusted_inputs",
        ),
    ),
    (
        "memory_versions",
        (
            "memory_id", "version", "action", "body", "status", "actor", "event_seq",
            "changed_at", "source_memory_id", "undone",
        ),
        "memory_id, version",
        ("undone",),
    ),
    ("memory_redirects", ("from_id", "to_id"), "from_id", ()),
    (
        "chunk_workspaces",
        ("workspace_id", "root", "generation", "chunk_count", "indexed_at", "chunker"),
        "workspace_id",
        ("root", "generation", "chunk_count", "indexed_at", "chunker"),
    ),
    (
        "chunk_files",
        ("workspace_id", "path", "size", "mtime_ns", "file_hash", "indexed_ns"),
        "workspace_id, path",
        ("size", "mtime_ns", "file_hash", "indexed_ns"),
    ),
    (
        "chunks",
        (
            "id", "workspace_id", "path", "ord", "start_line", "end_line", "file_hash",
            "chunk_hash", "content",
        ),
        "id",
        (),
    ),
    (
        "chunk_vectors",
        ("workspace_id", "model", "chunk_id", "dims", "vector"),
        "workspace_id, model, chunk_id",
        (),
    ),
)  # fmt: skip

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class TableCount:
    table: str
    source: int
    target: int

    @property
    def ok(self) -> bool:
        return self.target >= self.source


@dataclass(frozen=True, slots=True)
class TransferReport:
    copied: dict[str, int]
    counts: tuple[TableCount, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.counts)


def copy_file(source_file: Path, url: str, progress: Progress | None = None) -> TransferReport:
    """Open the SQLite database ``source_file`` and the Postgres store at ``url``, and copy."""
    from kairox.store.postgres.schema import MIGRATIONS

    source = Database.open(source_file)
    try:
        target = PgDatabase.open(url, MIGRATIONS)
        try:
            return copy_home(source, target, progress)
        finally:
            target.close()
    finally:
        source.close()


def copy_home(
    source: Database, target: PgDatabase, progress: Progress | None = None
) -> TransferReport:
    """Copy every table of ``source`` into ``target``; safe to run again."""
    _check_prefix(source, target)
    copied: dict[str, int] = {}
    for table, columns, conflict, updates in _TABLES:
        total = _count(source, table)
        done = 0
        if progress is not None:
            progress(table, 0, total)
        key = [k.strip() for k in conflict.split(",")]  # read in primary-key order (events: seq)
        last: tuple[Any, ...] | None = None
        while True:
            rows = _page(source, table, columns, key, last)
            if not rows:
                break
            last = tuple(rows[-1][k] for k in key)
            copied[table] = copied.get(table, 0) + _insert(target, table, columns, conflict,
                                                           updates, rows)  # fmt: skip
            done += len(rows)
            if progress is not None:
                progress(table, done, total)
    _advance_serials(target)
    return TransferReport(copied=copied, counts=tuple(_counts(source, target)))


def _page(
    source: Database,
    table: str,
    columns: Sequence[str],
    key: Sequence[str],
    after: tuple[Any, ...] | None,
) -> list[Any]:
    """The next ``BATCH`` rows after ``after`` in primary-key order (keyset paging)."""
    order = ", ".join(key)
    where = f"WHERE ({order}) > ({', '.join('?' * len(key))})" if after is not None else ""
    return source.query(
        f"SELECT {', '.join(columns)} FROM {table} {where} ORDER BY {order} LIMIT {BATCH}",
        after or (),
    )


def _insert(
    target: PgDatabase,
    table: str,
    columns: Sequence[str],
    conflict: str,
    updates: Sequence[str],
    rows: Sequence[Any],
) -> int:
    names = ["embedding" if c == "vector" else c for c in columns]
    marks = ", ".join("%s::vector" if c == "vector" else "%s" for c in columns)
    action = (
        "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in updates)
        if updates
        else "DO NOTHING"
    )
    statement = (
        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks}) "
        f"ON CONFLICT ({conflict}) {action} RETURNING xmax = 0 AS inserted"
    )
    values = [tuple(_value(c, row[c]) for c in columns) for row in rows]
    inserted = 0
    with target.atomic() as conn:
        cur = conn.raw.cursor()
        cur.executemany(statement, values, returning=True)
        while True:
            fetched = cur.fetchone()
            if fetched is not None and fetched["inserted"]:
                inserted += 1
            if not cur.nextset():
                break
    return inserted


def _value(column: str, value: Any) -> Any:
    if column == "vector":
        return vector_literal(np.frombuffer(bytes(value), dtype="<f4"))
    return value


def _check_prefix(source: Database, target: PgDatabase) -> None:
    """Refuse a target whose event log is not a prefix of the source's (another home's log)."""
    row = target.query_one("SELECT seq, type, payload FROM events ORDER BY seq DESC LIMIT 1")
    if row is None:
        return
    theirs = source.query_one("SELECT type, payload FROM events WHERE seq = ?", (row["seq"],))
    if theirs is None or theirs["type"] != row["type"] or theirs["payload"] != row["payload"]:
        raise StoreError(
            f"the Postgres store already holds a different event log (its event {row['seq']} is "
            "not this home's); migrate into an empty database"
        )


def _advance_serials(target: PgDatabase) -> None:
    with target.atomic() as conn:
        for table, column in (("events", "seq"), ("chunks", "id")):
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'),"
                f" (SELECT COALESCE(MAX({column}), 0) + 1 FROM {table}), false)"
            )


def _count(source: Database, table: str) -> int:
    row = source.query_one(f"SELECT count(*) FROM {table}")
    return int(row[0]) if row is not None else 0


def _counts(source: Database, target: PgDatabase) -> list[TableCount]:
    out = []
    for table, _, _, _ in _TABLES:
        mine = _count(source, table)
        theirs = target.query_one(f"SELECT count(*) AS n FROM {table}")
        out.append(TableCount(table, mine, int(theirs["n"]) if theirs else 0))
    return out
