"""Server-level statements (``CREATE DATABASE``, ``ALTER SYSTEM``...) outside any database's
transactions: what ``kairox.testing.postgres`` runs to start a server and hand out databases.
They run in autocommit on the server's ``postgres`` database, since Postgres refuses them inside
a transaction."""

from __future__ import annotations

import psycopg


def run_admin(url: str, *statements: str) -> None:
    """Run ``statements`` in order, each committed on its own, over one connection to ``url``."""
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)
