"""What a schema change is: a name and its SQL, applied once in its own transaction.

A leaf, so the SQLite ``Database``, the Postgres ``PgDatabase``, the per-area schema modules
(``kairox.store.schema``) and their ordered list (``kairox.store.migrations``) all import it
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Migration:
    """A named schema change, applied once, inside its own transaction."""

    name: str
    sql: str
