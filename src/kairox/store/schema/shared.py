"""Table definitions both backends create with the same text, in each backend's types.

The SQLite migrations (``kairox.store.schema``) and the Postgres ones
(``kairox.store.postgres.schema``) format these with their ``Dialect``; only what truly differs
(the events table and its triggers, keyword indexes, vectors) is written per backend.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Dialect:
    bigint: str  # a seq or a count
    double: str  # a floating-point time
    without_rowid: str  # SQLite's clustered-table suffix, or nothing


SQLITE = Dialect(bigint="INTEGER", double="REAL", without_rowid=" WITHOUT ROWID")
POSTGRES = Dialect(bigint="BIGINT", double="DOUBLE PRECISION", without_rowid="")


def ddl(text: str, dialect: Dialect, **extra: str) -> str:
    return text.format(
        bigint=dialect.bigint,
        double=dialect.double,
        without_rowid=dialect.without_rowid,
        **extra,
    )


EVENT_TOKENS_AND_SESSIONS = """
        CREATE TABLE event_tokens (
            seq {bigint} NOT NULL REFERENCES events(seq),
            tokenizer TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            PRIMARY KEY (seq, tokenizer)
        ){without_rowid};
        CREATE TABLE workspaces (
            id TEXT PRIMARY KEY,
            path TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            workspace_id TEXT NOT NULL REFERENCES workspaces(id),
            profile TEXT NOT NULL,
            created_at TEXT NOT NULL,
            started_seq {bigint} NOT NULL
        );
        CREATE TABLE session_leases (
            session_id TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            expires_at {double} NOT NULL
        );
"""

SESSION_ARCHIVE = "ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;"

MEMORIES = """
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
            proposed_seq {bigint}
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
            event_seq {bigint} NOT NULL REFERENCES events(seq),
            changed_at TEXT NOT NULL,
            source_memory_id TEXT,
            undone INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (memory_id, version)
        );
        CREATE TABLE memory_redirects (
            from_id TEXT PRIMARY KEY,
            to_id TEXT NOT NULL
        );
"""

CHUNK_WORKSPACES_AND_FILES = """
        CREATE TABLE chunk_workspaces (
            workspace_id TEXT PRIMARY KEY,
            root TEXT NOT NULL,
            generation {bigint} NOT NULL DEFAULT 0,
            chunk_count {bigint} NOT NULL DEFAULT 0,
            indexed_at TEXT{chunker}
        );
        CREATE TABLE chunk_files (
            workspace_id TEXT NOT NULL REFERENCES chunk_workspaces(workspace_id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            size {bigint} NOT NULL,
            mtime_ns {bigint} NOT NULL,
            file_hash TEXT NOT NULL,
            indexed_ns {bigint} NOT NULL,
            PRIMARY KEY (workspace_id, path)
        ){without_rowid};
"""
