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
from kairox.store.schema.full_text import UNREAD_FULL_TEXT
from kairox.store.terms_upgrade import CJK_TERMS, SCRIPT_TERMS

ALL_MIGRATIONS: tuple[Migration, ...] = (
    *events.MIGRATIONS,
    *memories.MIGRATIONS,
    *chunks.MIGRATIONS,
    *history.MIGRATIONS,
    *tokens.MIGRATIONS,
    *memory_index.MIGRATIONS,
    CJK_TERMS,
    *keyword_snapshots.MIGRATIONS,
    SCRIPT_TERMS,
    UNREAD_FULL_TEXT,
)
