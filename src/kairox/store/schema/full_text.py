"""``0440_unread_full_text``: the full-text indexes no search reads, dropped on both stores.

Keyword search ranks in process on both backends (``kairox.retrieval.bm25`` over the store's
texts, with the home's own stems), so SQLite's FTS5 tables of chunks, history units and memory
units (``chunks_fts``, ``history_fts``, ``memory_fts`` and their ``fts5vocab`` views) and
Postgres's ``tsv`` columns with their GIN indexes were written on every insert and read by
nothing: a second copy of every chunk's words, paid for by every ``kairox index`` and every
turn. Texts, events and vectors stay; knowledge bases keep their own index (``kb_fts``).
"""

from kairox.store.migration import Migration

_TABLES = ("chunks", "history", "memory")
_TRIGGERS = ("insert", "delete", "update")

UNREAD_FULL_TEXT = Migration(
    "0440_unread_full_text",
    "\n".join(
        [f"DROP TRIGGER IF EXISTS {t}_fts_{op};" for t in _TABLES for op in _TRIGGERS]
        + [
            f"DROP TABLE IF EXISTS {t}_fts_{view};"
            for t in _TABLES
            for view in ("instance", "vocab")
        ]
        + [f"DROP TABLE IF EXISTS {t}_fts;" for t in _TABLES]
    ),
)

UNREAD_FULL_TEXT_POSTGRES = Migration(
    "0440_unread_full_text",
    """
    DROP INDEX IF EXISTS chunks_tsv;
    DROP INDEX IF EXISTS history_units_tsv;
    DROP INDEX IF EXISTS memory_units_tsv;
    ALTER TABLE chunks DROP COLUMN IF EXISTS tsv;
    ALTER TABLE history_units DROP COLUMN IF EXISTS tsv;
    ALTER TABLE memory_units DROP COLUMN IF EXISTS tsv;
    """,
)
