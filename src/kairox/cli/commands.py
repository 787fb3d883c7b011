"""Imports every command module so that each registers itself on the root group."""

from kairox.cli import events_cmd, memory_cmd

__all__ = ["events_cmd", "memory_cmd"]
