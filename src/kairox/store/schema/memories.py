"""Schema of the memory projection: one row per memory, versions for history and undo."""

from kairox.store.db import Migration
from kairox.store.schema.shared import MEMORIES, SQLITE, ddl

MIGRATIONS = (
    Migration(
        "0010_memories",
        ddl(MEMORIES, SQLITE),
    ),
)
