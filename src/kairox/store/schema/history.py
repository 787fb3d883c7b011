"""Schema of the history index: one row per conversation event and its vectors (the FTS5 index
it was made with is dropped by ``0440_unread_full_text``: keyword search ranks in process).

A unit's ``id`` is the seq of the event it indexes, so a hit names its event directly. Units are
append-only like the log they mirror; ``history_index_state`` holds how far the log was read. The
Postgres twin is in ``kairox.store.postgres.schema`` (pgvector instead of BLOBs); ranking is the
same BM25 over the same stems on both.
"""

from kairox.store.migration import Migration

MIGRATIONS = (
    Migration(
        "0200_history_index",
        """
        CREATE TABLE history_units (
            id INTEGER PRIMARY KEY,
            workspace_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn INTEGER,
            role TEXT NOT NULL,
            speaker TEXT NOT NULL,
            ts TEXT NOT NULL,
            content TEXT NOT NULL,
            context TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX history_units_by_session ON history_units(session_id, id);
        CREATE INDEX history_units_by_workspace ON history_units(workspace_id, id);
        CREATE VIRTUAL TABLE history_fts USING fts5(
            speaker, content, context,
            content='history_units', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE VIRTUAL TABLE history_fts_vocab USING fts5vocab(history_fts, 'row');
        CREATE TRIGGER history_fts_insert AFTER INSERT ON history_units BEGIN
            INSERT INTO history_fts(rowid, speaker, content, context)
            VALUES (new.id, new.speaker, new.content, new.context);
        END;
        CREATE TRIGGER history_fts_delete AFTER DELETE ON history_units BEGIN
            INSERT INTO history_fts(history_fts, rowid, speaker, content, context)
            VALUES ('delete', old.id, old.speaker, old.content, old.context);
        END;
        CREATE TABLE history_vectors (
            workspace_id TEXT NOT NULL,
            model TEXT NOT NULL,
            unit_id INTEGER NOT NULL REFERENCES history_units(id) ON DELETE CASCADE,
            dims INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (workspace_id, model, unit_id)
        ) WITHOUT ROWID;
        CREATE TABLE history_workspaces (
            workspace_id TEXT PRIMARY KEY,
            generation INTEGER NOT NULL DEFAULT 0,
            unit_count INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE history_index_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_seq INTEGER NOT NULL
        );
        """,
    ),
    Migration(
        # BM25 with the searched scope's own statistics needs each unit's length and each
        # workspace's total; FTS5's instance vocabulary gives term frequencies per unit. The
        # index is derived from the log, so it is emptied and caught up again on first use.
        "0201_history_statistics",
        """
        DELETE FROM history_vectors;
        DELETE FROM history_units;
        DELETE FROM history_workspaces;
        DELETE FROM history_index_state;
        ALTER TABLE history_units ADD COLUMN length INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE history_workspaces ADD COLUMN length_sum INTEGER NOT NULL DEFAULT 0;
        CREATE VIRTUAL TABLE history_fts_instance USING fts5vocab(history_fts, 'instance');
        """,
    ),
)
