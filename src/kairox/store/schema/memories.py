"""Schema of the memory projection: one row per memory, versions for history and undo."""

from kairox.store.migration import Migration
from kairox.store.schema.shared import MEMORIES, SQLITE, ddl

# A pending proposal to delete a user or workspace memory (made by an agent over MCP): approving
# it deletes the key's memory. The same SQL on both stores (the Postgres list names it too).
FORGET_PROPOSALS = Migration(
    "0020_memory_forget_proposals",
    "ALTER TABLE memories ADD COLUMN forget INTEGER NOT NULL DEFAULT 0;",
)

MIGRATIONS = (
    Migration(
        "0010_memories",
        ddl(MEMORIES, SQLITE),
    ),
    FORGET_PROPOSALS,
)
