"""Schema of the saved keyword indexes (``kairox.store.keyword_snapshots``): derived data, so a
migration that empties an index's documents deletes its snapshots too. The Postgres twin is in
``kairox.store.postgres.schema`` (``BYTEA`` for ``BLOB``)."""

from kairox.store.migration import Migration

MIGRATIONS = (
    Migration(
        "0410_keyword_snapshots",
        """
        CREATE TABLE keyword_snapshots (
            kind TEXT NOT NULL,
            scope TEXT NOT NULL,
            generation INTEGER NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (kind, scope)
        );
        """,
    ),
)
