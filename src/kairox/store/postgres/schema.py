"""The Postgres schema, as named migrations (the same mechanism and names as the SQLite schema).

Differences from SQLite, and why: ``seq`` is a ``BIGSERIAL`` (``kairox migrate`` copies explicit
seqs, then moves the sequence past them); append-only is a PL/pgSQL trigger that also refuses
TRUNCATE; each committed event is announced with ``pg_notify('kairox_events', seq)`` so followers
need not poll; chunks carry a generated, weighted ``tsvector`` with a GIN index for the keyword
side, and vectors are pgvector ``vector`` values (a big workspace's HNSW index, one per
workspace, model and size since an index needs a fixed dimension, is built by the chunk store:
``kairox.store.postgres.chunk_index``).
"""

from kairox.store.migration import Migration
from kairox.store.schema import memories, memory_index, tokens
from kairox.store.schema.full_text import UNREAD_FULL_TEXT_POSTGRES
from kairox.store.schema.shared import (
    CHUNK_WORKSPACES_AND_FILES,
    EVENT_TOKENS_AND_SESSIONS,
    MEMORIES,
    POSTGRES,
    SESSION_ARCHIVE,
    ddl,
)
from kairox.store.terms_upgrade import CJK_TERMS, SCRIPT_TERMS_POSTGRES

EVENTS_CHANNEL = "kairox_events"
CHUNKER = ",\n            chunker TEXT NOT NULL DEFAULT ''"  # SQLite added it in a later migration

MIGRATIONS = (
    Migration(
        "0001_events",
        f"""
        CREATE TABLE events (
            seq BIGSERIAL PRIMARY KEY,
            ts TEXT NOT NULL,
            session_id TEXT,
            workspace_id TEXT,
            type TEXT NOT NULL,
            schema_version INTEGER NOT NULL,
            payload TEXT NOT NULL
        );
        CREATE INDEX events_by_session ON events(session_id, seq);
        CREATE INDEX events_by_type ON events(type, seq);
        CREATE FUNCTION kairox_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'events are append-only'; END $$;
        CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
            FOR EACH ROW EXECUTE FUNCTION kairox_events_append_only();
        CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
            FOR EACH STATEMENT EXECUTE FUNCTION kairox_events_append_only();
        CREATE FUNCTION kairox_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_notify('{EVENTS_CHANNEL}', NEW.seq::text); RETURN NULL; END $$;
        CREATE TRIGGER events_notify AFTER INSERT ON events
            FOR EACH ROW EXECUTE FUNCTION kairox_events_notify();
        """
        + ddl(EVENT_TOKENS_AND_SESSIONS, POSTGRES),
    ),
    Migration(
        "0002_session_archive",
        SESSION_ARCHIVE,
    ),
    Migration(
        # Session names are unique per workspace; ids stay unique in the home.
        "0003_session_names_per_workspace",
        """
        ALTER TABLE sessions DROP CONSTRAINT sessions_name_key;
        ALTER TABLE sessions ADD CONSTRAINT sessions_workspace_name_key
            UNIQUE (workspace_id, name);
        """,
    ),
    Migration(
        "0010_memories",
        ddl(MEMORIES, POSTGRES)
        + """
        -- The shared memory SQL uses SQLite's instr(); Postgres calls it strpos().
        CREATE FUNCTION instr(haystack TEXT, needle TEXT) RETURNS INTEGER
            LANGUAGE sql IMMUTABLE AS 'SELECT strpos(haystack, needle)';
        """,
    ),
    memories.FORGET_PROPOSALS,
    memories.NEWEST_MEMORIES,
    Migration(
        "0100_chunks",
        """
        CREATE EXTENSION IF NOT EXISTS vector;
        """
        + ddl(CHUNK_WORKSPACES_AND_FILES, POSTGRES, chunker=CHUNKER)
        + """
        CREATE TABLE chunks (
            id BIGSERIAL PRIMARY KEY,
            workspace_id TEXT NOT NULL,
            path TEXT NOT NULL,
            ord INTEGER NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            file_hash TEXT NOT NULL,
            chunk_hash TEXT NOT NULL,
            content TEXT NOT NULL,
            tsv TSVECTOR GENERATED ALWAYS AS (
                setweight(to_tsvector('english', path), 'A')
                || setweight(to_tsvector('english', content), 'B')
            ) STORED,
            FOREIGN KEY (workspace_id, path) REFERENCES chunk_files(workspace_id, path)
                ON DELETE CASCADE
        );
        CREATE INDEX chunks_by_file ON chunks(workspace_id, path, ord);
        CREATE INDEX chunks_tsv ON chunks USING gin(tsv);
        CREATE TABLE chunk_vectors (
            workspace_id TEXT NOT NULL,
            model TEXT NOT NULL,
            chunk_id BIGINT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            dims INTEGER NOT NULL,
            embedding vector NOT NULL,
            PRIMARY KEY (workspace_id, model, chunk_id)
        );
        CREATE INDEX chunk_vectors_by_chunk ON chunk_vectors(chunk_id);
        """,
    ),
    Migration(
        "0101_chunks_inline_storage",
        # A chunk's text and tsvector stay in its heap row (compressed) instead of TOAST: the
        # keyword side ranks every matching row with ts_rank, and a TOAST fetch per row was most
        # of a search's time (39k buffer reads for 11k matches at 20k chunks; 8.6k after).
        # Applies to rows written from now on; ``VACUUM FULL chunks`` rewrites older ones.
        """
        ALTER TABLE chunks ALTER COLUMN content SET STORAGE MAIN,
            ALTER COLUMN tsv SET STORAGE MAIN;
        """,
    ),
    Migration(
        # The history (recall) index: the SQLite tables' twins, with a tsvector of the units'
        # porter stems (speaker A, content B, context C) and pgvector vectors.
        "0200_history_index",
        """
        CREATE TABLE history_units (
            id BIGINT PRIMARY KEY,
            workspace_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn INTEGER,
            role TEXT NOT NULL,
            speaker TEXT NOT NULL,
            ts TEXT NOT NULL,
            content TEXT NOT NULL,
            context TEXT NOT NULL DEFAULT '',
            length INTEGER NOT NULL DEFAULT 0,
            tsv TSVECTOR NOT NULL
        );
        CREATE INDEX history_units_by_session ON history_units(session_id, id);
        CREATE INDEX history_units_by_workspace ON history_units(workspace_id, id);
        CREATE INDEX history_units_tsv ON history_units USING gin(tsv);
        CREATE TABLE history_vectors (
            workspace_id TEXT NOT NULL,
            model TEXT NOT NULL,
            unit_id BIGINT NOT NULL REFERENCES history_units(id) ON DELETE CASCADE,
            dims INTEGER NOT NULL,
            embedding vector NOT NULL,
            PRIMARY KEY (workspace_id, model, unit_id)
        );
        CREATE TABLE history_workspaces (
            workspace_id TEXT PRIMARY KEY,
            generation BIGINT NOT NULL DEFAULT 0,
            unit_count BIGINT NOT NULL DEFAULT 0,
            length_sum BIGINT NOT NULL DEFAULT 0
        );
        CREATE TABLE history_index_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_seq BIGINT NOT NULL
        );
        """,
    ),
    *tokens.MIGRATIONS,
    Migration(
        # The memory search index: the SQLite tables' twins (with 0301's length), a tsvector of
        # the units' porter stems (key A, body B) and pgvector vectors.
        "0300_memory_index",
        """
        CREATE TABLE memory_units (
            id BIGSERIAL PRIMARY KEY,
            memory_id TEXT NOT NULL UNIQUE,
            workspace_id TEXT NOT NULL,
            key TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL,
            length INTEGER NOT NULL DEFAULT 0,
            tsv TSVECTOR NOT NULL
        );
        CREATE INDEX memory_units_by_workspace ON memory_units(workspace_id, id);
        CREATE INDEX memory_units_tsv ON memory_units USING gin(tsv);
        CREATE TABLE memory_unit_vectors (
            unit_id BIGINT NOT NULL REFERENCES memory_units(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dims INTEGER NOT NULL,
            embedding vector NOT NULL,
            PRIMARY KEY (model, unit_id)
        );
        CREATE TABLE memory_index_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_seq BIGINT NOT NULL,
            generation BIGINT NOT NULL
        );
        """,
    ),
    Migration(
        # As SQLite's 0302: the embedded text is the key's words and the body.
        "0302_memory_index_key_words",
        """
        DELETE FROM memory_unit_vectors;
        UPDATE memory_index_state SET generation = generation + 1;
        """,
    ),
    memory_index.EMBEDDED,
    CJK_TERMS,  # the same SQL as SQLite's
    Migration(
        # As SQLite's: the saved keyword indexes (kairox.store.keyword_snapshots).
        "0410_keyword_snapshots",
        """
        CREATE TABLE keyword_snapshots (
            kind TEXT NOT NULL,
            scope TEXT NOT NULL,
            generation BIGINT NOT NULL,
            data BYTEA NOT NULL,
            PRIMARY KEY (kind, scope)
        );
        """,
    ),
    Migration(
        # The pgvector HNSW indexes of big workspaces (kairox.store.postgres.chunk_index), one
        # per (workspace, model, size), built once a workspace reaches the ranker's
        # ``ann_min_rows``. The per-model cosine indexes of before in-process ranking are
        # dropped: nothing reads them, and every vector written paid for their graph.
        "0420_chunk_vector_indexes",
        """
        CREATE TABLE chunk_vector_indexes (
            workspace_id TEXT NOT NULL,
            model TEXT NOT NULL,
            dims INTEGER NOT NULL,
            name TEXT NOT NULL,
            PRIMARY KEY (workspace_id, model)
        );
        DO $$
        DECLARE old record;
        BEGIN
            FOR old IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
                AND tablename = 'chunk_vectors' AND indexname LIKE 'chunk\\_vectors\\_hnsw\\_%'
            LOOP
                EXECUTE format('DROP INDEX %I', old.indexname);
            END LOOP;
        END $$;
        """,
    ),
    SCRIPT_TERMS_POSTGRES,  # SQLite's, testing for non-ASCII text with octet_length
    UNREAD_FULL_TEXT_POSTGRES,
)
