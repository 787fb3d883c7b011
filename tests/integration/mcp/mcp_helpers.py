"""Helpers for the MCP tests: results as JSON, and a stdio server whose stderr is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


@dataclass
class Started:
    url: str
    stderr: str = ""
    """What the server wrote to stderr (filled in once it has stopped)."""


@contextmanager
def http_server(
    home: Path, workspace: Path, *extra: str, store_url: str | None = None, stderr: bool = False
) -> Iterator[Any]:
    """``kairox mcp --http --port 0`` in a subprocess; yields the URL it printed (or, with
    ``stderr``, a ``Started`` whose ``stderr`` is read after the server stops)."""
    env = dict(os.environ)
    if store_url:
        env["KAIROX_STORE_URL"] = store_url
    args = ["mcp", "--http", "--port", "0", "--workspace", str(workspace), *extra]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", "--home", str(home), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    started = Started(url="")
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # the socket listens before the URL is printed
            if line.startswith("URL: "):
                started.url = line.removeprefix("URL: ").strip()
                break
        assert started.url, proc.stderr.read() if proc.stderr else ""
        yield started if stderr else started.url
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
        started.stderr = err


def authed(url: str, token: str) -> Any:
    """The official client's HTTP transport, sending ``token`` as a bearer token."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    return streamable_http_client(
        url, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    )


def kairox(
    home: Path, *args: str, store_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if store_url:
        env["KAIROX_STORE_URL"] = store_url
    return subprocess.run(
        [sys.executable, "-m", "kairox", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
