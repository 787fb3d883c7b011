"""Schema of the MCP access tokens: a name, the token's SHA-256, its workspaces and its rights.

The same SQL serves SQLite and Postgres (``kairox.store.postgres.schema`` lists it too).
"""

from kairox.store.migration import Migration

TOKENS_SQL = """
    CREATE TABLE access_tokens (
        name TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        workspaces TEXT NOT NULL,
        read_only INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT
    );
"""

MIGRATIONS = (Migration("0300_access_tokens", TOKENS_SQL),)
