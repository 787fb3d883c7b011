"""The ordered list of every migration. Each area owns its module under ``kairox.store.schema``."""

from kairox.store.migration import Migration
from kairox.store.schema import (
    chunks,
    events,
    history,
    keyword_snapshots,
    memories,
    memory_index,
    tokens,
)

ALL_MIGRATIONS: tuple[Migration, ...] = (
    *events.MIGRATIONS,
    *memories.MIGRATIONS,
    *chunks.MIGRATIONS,
    *history.MIGRATIONS,
    *tokens.MIGRATIONS,
    *memory_index.MIGRATIONS,
    *keyword_snapshots.MIGRATIONS,
)
