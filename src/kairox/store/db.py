"""The SQLite connection: WAL mode, busy timeout, savepoint-based ``atomic()`` and migrations.

One ``Database`` per home directory. Writes take the write lock up front (``BEGIN IMMEDIATE``) so
two processes never deadlock on a lock upgrade; ``busy_timeout`` makes the loser wait, not fail.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from kairox.core.errors import AppendOnlyViolation, StoreError
from kairox.store.migration import Migration
from kairox.store.migrations import ALL_MIGRATIONS

BUSY_TIMEOUT_MS = 60_000
PAGE_CACHE_KIB = 32_768
"""Each connection's page cache (SQLite's default is 2 MiB): a search reads its hits' rows, and
at 10k chunks the database is about 100 MB, so the default cache rarely held the rows a query
asked for before, while the pages a search touches are a small part of this. It grows only as
pages are read."""


class Database:
    """A shared SQLite connection with one lock; blocking calls belong off the event loop."""

    def __init__(self, conn: sqlite3.Connection, path: str, *, readonly: bool = False) -> None:
        self._conn = conn
        self.path = path
        self.readonly = readonly
        self._lock = threading.RLock()
        self._depth = 0
        self._on_commit: list[Callable[[], None]] = []

    @classmethod
    def open(cls, path: str | Path, migrations: Sequence[Migration] | None = None) -> Database:
        """Open (creating if needed) and migrate the database at ``path``.

        A database in a home that cannot be written (a read-only mount, a snapshot) opens
        read-only: reads work, and a write fails in one line naming the home."""
        target = str(path)
        if target != ":memory:" and not _writable(Path(target)):
            return cls._open_readonly(Path(target), migrations)
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                target,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open the Kairox database at {target}: {exc}; "
                "move the file aside (or point --home elsewhere) and run again"
            ) from exc
        conn.row_factory = sqlite3.Row
        db = cls(conn, target)
        if migrations is None:
            migrations = ALL_MIGRATIONS
        db.migrate(migrations)
        return db

    @classmethod
    def _open_readonly(cls, path: Path, migrations: Sequence[Migration] | None) -> Database:
        if not path.is_file():
            raise StoreError(
                f"the home {path.parent} is read-only and holds no Kairox database; "
                "point --home at a writable directory"
            )
        try:
            conn = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=ro&immutable=1",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the read-only Kairox database at {path}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        db = cls(conn, str(path), readonly=True)
        if migrations is None:
            migrations = ALL_MIGRATIONS
        missing = [m.name for m in migrations if m.name not in set(db.applied_migrations())]
        if missing:
            db.close()
            raise StoreError(
                f"the database at {path} needs an upgrade ({len(missing)} migrations) but its "
                "home is read-only; run once with a writable home"
            )
        return db

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """A transaction, or a savepoint when nested. Commits on success, rolls back on error.

        Callbacks registered with ``after_commit`` run once the outermost transaction has
        committed, outside the connection lock; a rollback discards those of its scope.
        """
        committed: list[Callable[[], None]] = []
        with self._lock:
            if self.readonly:
                raise StoreError(
                    f"the home {Path(self.path).parent} is read-only; this command needs to "
                    "write, so run it with a writable home"
                )
            mark = len(self._on_commit)
            if self._depth == 0:
                self._begin_immediate()
            else:
                self._conn.execute(f"SAVEPOINT sp{self._depth}")
            self._depth += 1
            try:
                yield self._conn
            except BaseException as exc:
                self._depth -= 1
                del self._on_commit[mark:]
                self._rollback()
                translated = (
                    _translate(exc, self.path)
                    if isinstance(exc, sqlite3.DatabaseError) and self._depth == 0
                    else exc
                )
                if translated is exc:
                    raise
                raise translated from exc
            else:
                self._depth -= 1
                if self._depth == 0:
                    try:
                        self._commit()
                    except sqlite3.DatabaseError as exc:
                        raise _translate_error(exc, self.path) from exc
                    finally:
                        committed, self._on_commit = self._on_commit, []
                else:
                    self._conn.execute(f"RELEASE sp{self._depth}")
        for callback in committed:
            callback()

    def _rollback(self) -> None:
        """Undo the innermost scope. After a full disk or an I/O error SQLite may have rolled
        the transaction back itself; the error that caused it is what the caller must see."""
        try:
            if self._depth == 0:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
            else:
                self._conn.execute(f"ROLLBACK TO sp{self._depth}")
                self._conn.execute(f"RELEASE sp{self._depth}")
        except sqlite3.DatabaseError:
            if self._depth == 0:
                return
            raise

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the enclosing transaction commits (never if it rolls back)."""
        with self._lock:
            if self._depth == 0:
                raise StoreError("after_commit needs an open transaction (inside atomic())")
            self._on_commit.append(callback)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """The connection for a consistent read, without taking the write lock."""
        with self._lock:
            try:
                yield self._conn
            except sqlite3.DatabaseError as exc:
                translated = _translate(exc, self.path)
                if translated is exc:
                    raise
                raise translated from exc

    def _begin_immediate(self) -> None:
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise StoreError(f"cannot start a write: {exc}") from exc
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"the database at {self.path} stayed locked for "
                        f"{BUSY_TIMEOUT_MS // 1000} s; another process holds it"
                    ) from exc
                time.sleep(0.005)

    def _commit(self) -> None:
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self._conn.execute("COMMIT")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    self._conn.execute("ROLLBACK")
                    raise StoreError(f"could not commit to {self.path}: {exc}") from exc
                time.sleep(0.005)

    def query(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return list(self._conn.execute(sql, params).fetchall())
            except sqlite3.DatabaseError as exc:
                raise _translate(exc, self.path) from exc

    def query_one(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Row | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        """Run one write statement; callers group writes with ``atomic()``."""
        with self._lock:
            try:
                return self._conn.execute(sql, params)
            except sqlite3.DatabaseError as exc:
                raise _translate(exc, self.path) from exc

    def migrate(self, migrations: Sequence[Migration]) -> None:
        names = [m.name for m in migrations]
        if len(set(names)) != len(names):
            raise StoreError("duplicate migration names: " + ", ".join(names))
        with self.atomic() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS _migrations "
                "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
            )
        for migration in migrations:
            with self.atomic() as conn:
                done = conn.execute(
                    "SELECT 1 FROM _migrations WHERE name = ?", (migration.name,)
                ).fetchone()
                if done:
                    continue
                for statement in _split_sql(migration.sql):
                    conn.execute(statement)
                conn.execute("INSERT INTO _migrations(name) VALUES (?)", (migration.name,))

    def applied_migrations(self) -> list[str]:
        return [r["name"] for r in self.query("SELECT name FROM _migrations ORDER BY rowid")]


def _split_sql(script: str) -> list[str]:
    """Split a migration script into statements; trigger bodies (BEGIN ... END;) stay whole."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.splitlines():
        current.append(line)
        candidate = "\n".join(current).strip()
        if candidate and sqlite3.complete_statement(candidate):
            statements.append(candidate)
            current = []
    rest = "\n".join(current).strip()
    if rest:
        statements.append(rest)
    return statements


# SQLite's primary result codes for a full disk, an I/O error, a damaged file and a non-database.
SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_NOTADB = 10, 11, 13, 26


def _translate(exc: sqlite3.DatabaseError, path: str) -> Exception:
    """One line naming the file and what to do; constraint errors stay for their callers."""
    text = str(exc)
    if "append-only" in text:
        return AppendOnlyViolation(text)
    if isinstance(exc, sqlite3.IntegrityError):
        return exc
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code == SQLITE_FULL or "disk is full" in text:
        return StoreError(
            f"cannot write {path}: the disk is full; free some space and run again "
            "(nothing was half-written)"
        )
    if code == SQLITE_IOERR:
        return StoreError(
            f"cannot write {path}: {text} (is the disk full or failing?); "
            "free some space or check the disk, then run again"
        )
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB) or "malformed" in text:
        return StoreError(
            f"the Kairox database {path} is damaged ({text}); restore it from a backup, or "
            "move it aside (a new, empty one is created) and run again"
        )
    return StoreError(f"database error in {path}: {text}")


def _translate_error(exc: sqlite3.DatabaseError, path: str) -> Exception:
    translated = _translate(exc, path)
    return translated if translated is not exc else StoreError(f"database error in {path}: {exc}")


def _writable(path: Path) -> bool:
    """False when the database (or, before it exists, the nearest existing parent of it) cannot
    be written by this process."""
    if path.exists():
        return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    probe = path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return os.access(probe, os.W_OK)
