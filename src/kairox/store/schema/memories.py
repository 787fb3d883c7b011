"""Schema of the memory projection: one row per memory, versions for history and undo."""

from kairox.store.migration import Migration
from kairox.store.schema.shared import MEMORIES, SQLITE, ddl

# A pending proposal to delete a user or workspace memory (made by an agent over MCP): approving
# it deletes the key's memory. The same SQL on both stores (the Postgres list names it too).
FORGET_PROPOSALS = Migration(
    "0020_memory_forget_proposals",
    "ALTER TABLE memories ADD COLUMN forget INTEGER NOT NULL DEFAULT 0;",
)

# A turn reads the newest accepted memories of each owner in view (``for_context``) along this
# index, never sorting all of them. The same SQL on both stores.
NEWEST_MEMORIES = Migration(
    "0021_memories_newest",
    "CREATE INDEX memories_newest ON memories(scope, owner, status, updated_at, id);",
)

MIGRATIONS = (
    Migration(
        "0010_memories",
        ddl(MEMORIES, SQLITE),
    ),
    FORGET_PROPOSALS,
    NEWEST_MEMORIES,
)
