"""Schema of the append-only event log, sessions, workspaces and per-tokenizer token counts."""

from kairox.store.migration import Migration
from kairox.store.schema.shared import EVENT_TOKENS_AND_SESSIONS, SESSION_ARCHIVE, SQLITE, ddl

MIGRATIONS = (
    Migration(
        "0001_events",
        """
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            ts TEXT NOT NULL,
            session_id TEXT,
            workspace_id TEXT,
            type TEXT NOT NULL,
            schema_version INTEGER NOT NULL,
            payload TEXT NOT NULL
        );
        CREATE INDEX events_by_session ON events(session_id, seq);
        CREATE INDEX events_by_type ON events(type, seq);
        CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
        CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
        """
        + ddl(EVENT_TOKENS_AND_SESSIONS, SQLITE),
    ),
    Migration(
        "0002_session_archive",
        SESSION_ARCHIVE,
    ),
    Migration(
        # Session names are unique per workspace (every workspace has its own ``main``); ids stay
        # unique in the home. SQLite cannot drop a constraint, so the table is rebuilt.
        "0003_session_names_per_workspace",
        """
        CREATE TABLE sessions_new (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            workspace_id TEXT NOT NULL REFERENCES workspaces(id),
            profile TEXT NOT NULL,
            created_at TEXT NOT NULL,
            started_seq INTEGER NOT NULL,
            archived INTEGER NOT NULL DEFAULT 0,
            UNIQUE (workspace_id, name)
        );
        INSERT INTO sessions_new(id, name, workspace_id, profile, created_at, started_seq,
            archived)
            SELECT id, name, workspace_id, profile, created_at, started_seq, archived
            FROM sessions;
        DROP TABLE sessions;
        ALTER TABLE sessions_new RENAME TO sessions;
        """,
    ),
)
