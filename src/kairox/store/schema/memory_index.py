"""Schema of the memory search index: one unit per live memory (key and body) and its vectors per
embedder (its FTS5 index is dropped by ``0440_unread_full_text``). Derived from the memory events
(``memory_index_state`` holds how far the log was read), so losing it costs a re-index, never a
memory. The Postgres twin is in ``kairox.store.postgres.schema`` (pgvector instead of BLOBs);
ranking is the same BM25 over the same stems on both."""

from kairox.store.migration import Migration

# The generation at which every unit last had a vector of a model: a search or turn reads this
# row instead of counting the vectors (which reads every one). The same SQL on both stores.
EMBEDDED = Migration(
    "0303_memory_index_embedded",
    """
    CREATE TABLE memory_index_embedded (
        model TEXT PRIMARY KEY,
        generation BIGINT NOT NULL
    );
    """,
)

MIGRATIONS = (
    Migration(
        "0300_memory_index",
        """
        CREATE TABLE memory_units (
            id INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL UNIQUE,
            workspace_id TEXT NOT NULL,
            key TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL
        );
        CREATE INDEX memory_units_by_workspace ON memory_units(workspace_id, id);
        CREATE VIRTUAL TABLE memory_fts USING fts5(
            key, body, content='memory_units', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row');
        CREATE TRIGGER memory_fts_insert AFTER INSERT ON memory_units BEGIN
            INSERT INTO memory_fts(rowid, key, body) VALUES (new.id, new.key, new.body);
        END;
        CREATE TRIGGER memory_fts_delete AFTER DELETE ON memory_units BEGIN
            INSERT INTO memory_fts(memory_fts, rowid, key, body)
            VALUES ('delete', old.id, old.key, old.body);
        END;
        CREATE TRIGGER memory_fts_update AFTER UPDATE ON memory_units BEGIN
            INSERT INTO memory_fts(memory_fts, rowid, key, body)
            VALUES ('delete', old.id, old.key, old.body);
            INSERT INTO memory_fts(rowid, key, body) VALUES (new.id, new.key, new.body);
        END;
        CREATE TABLE memory_unit_vectors (
            unit_id INTEGER NOT NULL REFERENCES memory_units(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dims INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, unit_id)
        ) WITHOUT ROWID;
        CREATE TABLE memory_index_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_seq INTEGER NOT NULL,
            generation INTEGER NOT NULL
        );
        """,
    ),
    Migration(
        # BM25 with the searched scope's own statistics (as the history index's) needs each
        # unit's length; FTS5's instance vocabulary gives term frequencies per unit. The index is
        # derived from the log, so it is emptied and caught up again on first use.
        "0301_memory_index_statistics",
        """
        DELETE FROM memory_unit_vectors;
        DELETE FROM memory_units;
        DELETE FROM memory_index_state;
        ALTER TABLE memory_units ADD COLUMN length INTEGER NOT NULL DEFAULT 0;
        CREATE VIRTUAL TABLE memory_fts_instance USING fts5vocab(memory_fts, 'instance');
        """,
    ),
    Migration(
        # A unit's embedded text became its key's words and its body (``readable_key``): the
        # vectors of the old text are dropped and embedded again at the next search.
        "0302_memory_index_key_words",
        """
        DELETE FROM memory_unit_vectors;
        UPDATE memory_index_state SET generation = generation + 1;
        """,
    ),
    EMBEDDED,
)
