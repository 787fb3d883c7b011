"""Helpers for the MCP tests: results as JSON, and a stdio server whose stderr is kept."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters


def payload(result: Any) -> Any:
    """A tool result's JSON value (structured content, else its first text block)."""
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured.get("result", structured)
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert result.is_error, result
    return str(result.content[0].text)


def stdio_params(home: Path, workspace: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "kairox", "--home", str(home), "mcp", "--workspace", str(workspace), *extra],
        env=dict(os.environ),  # the SDK passes only a few variables by default
    )
