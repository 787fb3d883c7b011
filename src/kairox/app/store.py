"""Moving a home's store: ``kairox migrate --to postgresql://...`` copies the SQLite home into
Postgres (events in seq order, memories with versions and redirects, sessions, chunks, vectors)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.core.aio import blocking
from kairox.core.errors import InvalidInput, StoreError
from kairox.core.paths import database_path, resolve_home
from kairox.store.backend import is_postgres_url

if TYPE_CHECKING:  # psycopg loads only when a migration runs
    from kairox.store.postgres.transfer import TransferReport

__all__ = ["migrate_home"]

# (table, rows done, rows in the table)
Progress = Callable[[str, int, int], None]


async def migrate_home(
    home: str | Path | None, url: str, progress: Progress | None = None
) -> TransferReport:
    """Copy the SQLite store of ``home`` into the Postgres database at ``url`` (idempotent)."""
    if not is_postgres_url(url):
        raise InvalidInput("--to must be a postgresql:// URL, e.g. postgresql://user@host/kairox")
    source_file = database_path(resolve_home(home))
    if not source_file.is_file():
        raise StoreError(f"no Kairox database at {source_file}; nothing to migrate")
    return await blocking(_copy, source_file, url, progress)


def _copy(source_file: Path, url: str, progress: Progress | None) -> TransferReport:
    from kairox.store.postgres.transfer import copy_file

    return copy_file(source_file, url, progress)
