"""Schema of the workspace RAG index: files, line-ranged chunks and their vectors (the FTS5 index
they were made with is dropped by ``0440_unread_full_text``: keyword search ranks in process).

Every row carries the ``workspace_id`` it belongs to, so workspaces stay isolated in one database.
Vectors are stored once per (chunk, embedding model) as little-endian float32 BLOBs.
"""

from kairox.store.migration import Migration
from kairox.store.schema.shared import CHUNK_WORKSPACES_AND_FILES, SQLITE, ddl

MIGRATIONS = (
    Migration(
        "0100_chunks",
        ddl(CHUNK_WORKSPACES_AND_FILES, SQLITE, chunker="")
        + """
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            workspace_id TEXT NOT NULL,
            path TEXT NOT NULL,
            ord INTEGER NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            file_hash TEXT NOT NULL,
            chunk_hash TEXT NOT NULL,
            content TEXT NOT NULL,
            FOREIGN KEY (workspace_id, path) REFERENCES chunk_files(workspace_id, path)
                ON DELETE CASCADE
        );
        CREATE INDEX chunks_by_file ON chunks(workspace_id, path, ord);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            path, content, content='chunks', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, 'row');
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, path, content) VALUES (new.id, new.path, new.content);
        END;
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, path, content)
            VALUES ('delete', old.id, old.path, old.content);
        END;
        CREATE TRIGGER chunks_fts_update AFTER UPDATE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, path, content)
            VALUES ('delete', old.id, old.path, old.content);
            INSERT INTO chunks_fts(rowid, path, content) VALUES (new.id, new.path, new.content);
        END;
        CREATE TABLE chunk_vectors (
            workspace_id TEXT NOT NULL,
            model TEXT NOT NULL,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            dims INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (workspace_id, model, chunk_id)
        ) WITHOUT ROWID;
        CREATE INDEX chunk_vectors_by_chunk ON chunk_vectors(chunk_id);
        """,
    ),
    Migration(
        "0101_chunks_chunker",
        """
        ALTER TABLE chunk_workspaces ADD COLUMN chunker TEXT NOT NULL DEFAULT '';
        """,
    ),
    Migration(
        # Per-workspace document frequencies when the home holds more than one workspace.
        "0102_chunks_fts_instance",
        "CREATE VIRTUAL TABLE chunks_fts_instance USING fts5vocab(chunks_fts, 'instance');",
    ),
    Migration(
        # A workspace's vector count per model from a small index (``count_missing_vectors``
        # on every index run) instead of the vectors themselves: chunk_vectors is WITHOUT
        # ROWID, so its rows, blobs and all, are its primary key. Postgres keeps its rows apart
        # from the primary key index, which already serves the count.
        "0103_chunk_vectors_by_model",
        "CREATE INDEX chunk_vectors_by_model ON chunk_vectors(workspace_id, model);",
    ),
)
