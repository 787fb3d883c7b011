"""Imports every command module so that each registers itself on the root group."""

from kairox.cli import chat_cmd, events_cmd, memory_cmd, retrieval_cmd

__all__ = ["chat_cmd", "events_cmd", "memory_cmd", "retrieval_cmd"]
