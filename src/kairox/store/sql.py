"""The slice of a SQL database the shared store code needs, so one class serves SQLite and Postgres.

The memory projection, the session registry and most of the event log are the same SQL on both
backends (``?`` placeholders, rows read by column name); each backend's ``Database`` hands out a
connection that speaks this protocol (``sqlite3.Connection`` natively,
``kairox.store.postgres.db.PgConnection`` by translating placeholders). Backend-specific behaviour
(row locks, advisory locks, ``IN`` lists or arrays) is a hook on the class, not a branch in code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

# A result row, read by column name (``sqlite3.Row`` or a psycopg dict row), and a connection
# inside ``atomic()``/``read()``: ``execute(sql, params)`` returning a cursor with ``fetchone``,
# ``fetchall`` and iteration (``sqlite3.Connection``, ``PgConnection``).
SqlRow = Any
SqlConnection = Any


class SqlDatabase(Protocol):
    """``atomic()`` is one transaction (a savepoint when nested); ``read()`` a consistent read;
    ``after_commit`` runs a callback once the enclosing transaction commits."""

    def atomic(self) -> AbstractContextManager[SqlConnection]: ...

    def read(self) -> AbstractContextManager[SqlConnection]: ...

    def after_commit(self, callback: Callable[[], None]) -> None: ...

    def query(self, sql: str, params: Sequence[object] = ()) -> list[Any]: ...

    def query_one(self, sql: str, params: Sequence[object] = ()) -> Any: ...

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any: ...

    def close(self) -> None: ...


IN_BATCH = 500  # ids per ``IN`` list: far below SQLite's bound-variable limit


def query_in(db: SqlDatabase, sql: str, params: Sequence[object], ids: Sequence[int]) -> list[Any]:
    """The rows of ``sql`` for ``ids``, sorted, in batches: ``{ids}`` in ``sql`` stands for the
    ``IN`` list, whose values follow ``params``. Rows come back in batch order."""
    rows: list[Any] = []
    wanted = sorted(ids)
    for start in range(0, len(wanted), IN_BATCH):
        part = wanted[start : start + IN_BATCH]
        rows += db.query(sql.replace("{ids}", ",".join("?" * len(part))), [*params, *part])
    return rows
