"""The scripted model as a test double: replay JSON Lines replies in your own tests.

Re-exported from ``kairox.models.scripted`` so users import test helpers from one place.
"""

from __future__ import annotations

from kairox.models.scripted import (
    DEFAULT_CHUNK,
    ScriptedProvider,
    ScriptLine,
    ScriptToolCall,
    load_script,
    parse_script,
    write_script,
)

__all__ = [
    "DEFAULT_CHUNK",
    "ScriptLine",
    "ScriptToolCall",
    "ScriptedProvider",
    "load_script",
    "parse_script",
    "write_script",
]
