"""Imports every command module so that each registers itself on the root group."""

from kairox.cli import (
    chat_cmd,
    compact_cmd,
    context_cmd,
    demo_cmd,
    events_cmd,
    mcp_cmd,
    memory_cmd,
    recall_cmd,
    retrieval_cmd,
    store_cmd,
    tokens_cmd,
    tui_cmd,
    web_cmd,
)

__all__ = [
    "chat_cmd",
    "compact_cmd",
    "context_cmd",
    "demo_cmd",
    "events_cmd",
    "mcp_cmd",
    "memory_cmd",
    "recall_cmd",
    "retrieval_cmd",
    "store_cmd",
    "tokens_cmd",
    "tui_cmd",
    "web_cmd",
]
