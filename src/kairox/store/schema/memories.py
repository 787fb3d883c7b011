"""Schema of the memory projection: one row per memory, versions for history and undo."""

from kairox.store.db import Migration

MIGRATIONS = (
    Migration(
        "0010_memories",
        """
        CREATE TABLE memories (
            id TEXT PRIMARY KEY,
            scope TEXT NOT NULL CHECK (scope IN ('session', 'user', 'workspace')),
            owner TEXT NOT NULL,
            workspace_id TEXT,
            session_id TEXT,
            key TEXT,
            body TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected', 'deleted')),
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            approved_at TEXT,
            decided_by TEXT,
            decision_reason TEXT,
            proposed_session_id TEXT,
            proposed_turn INTEGER,
            untrusted_inputs TEXT NOT NULL DEFAULT '[]',
            proposed_seq INTEGER
        );
        CREATE UNIQUE INDEX memories_one_per_key ON memories(scope, owner, key)
            WHERE key IS NOT NULL AND status = 'accepted';
        CREATE INDEX memories_by_owner ON memories(scope, owner, status);
        CREATE TABLE memory_versions (
            memory_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            action TEXT NOT NULL,
            body TEXT NOT NULL,
            status TEXT NOT NULL,
            actor TEXT NOT NULL,
            event_seq INTEGER NOT NULL REFERENCES events(seq),
            changed_at TEXT NOT NULL,
            source_memory_id TEXT,
            undone INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (memory_id, version)
        );
        CREATE TABLE memory_redirects (
            from_id TEXT PRIMARY KEY,
            to_id TEXT NOT NULL
        );
        """,
    ),
    Migration(
        # A pending proposal to delete a user or workspace memory (made by an agent over MCP):
        # approving it deletes the key's memory.
        "0020_memory_forget_proposals",
        "ALTER TABLE memories ADD COLUMN forget INTEGER NOT NULL DEFAULT 0;",
    ),
)
