"""Size limits every surface shares, so the CLI, the web API, import and MCP agree."""

from __future__ import annotations

MAX_MEMORY_BODY_CHARS = 100_000
"""The longest memory body any surface accepts (the web API, import, and the MCP tools' schema)."""
