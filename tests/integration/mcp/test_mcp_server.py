"""The MCP server: in-process through the SDK client, and as a real stdio subprocess."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from kairox.app import AppFacade
from kairox.core.types import MemoryStatus
from kairox.mcp.server import build_server


def _payload(result: object) -> object:
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured.get("result", structured)
    content = getattr(result, "content")  # noqa: B009
    return json.loads(content[0].text)


async def test_propose_goes_through_approval_and_search_finds_it(
    workspace: Path, kairox_home: Path
) -> None:
    facade = AppFacade.open(kairox_home)
    try:
        server = build_server(facade, workspace=workspace)
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_list", "memory_search", "memory_propose", "workspace_search"} <= names
            proposed = _payload(
                await client.call_tool(
                    "memory_propose",
                    {"scope": "workspace", "key": "test.runner", "body": "pytest with -q"},
                )
            )
            assert isinstance(proposed, dict) and proposed["status"] == "pending"
            assert _payload(await client.call_tool("memory_search", {"query": "pytest"})) == []
            await facade.memory.approve(proposed["id"])
            found = _payload(await client.call_tool("memory_search", {"query": "pytest"}))
            assert isinstance(found, list) and [m["key"] for m in found] == ["test.runner"]
            refused = await client.call_tool(
                "memory_propose", {"scope": "user", "body": "no key given"}
            )
            assert refused.is_error
            records = await facade.memory.list(workspace=workspace, statuses=[MemoryStatus.PENDING])
            assert records == []
    finally:
        facade.close()


async def test_stdio_server_answers_workspace_search(workspace: Path, kairox_home: Path) -> None:
    (workspace / "notes.md").write_text("The staging database lives on port 5433.\n")
    facade = AppFacade.open(kairox_home)
    try:
        await facade.retrieval.index(workspace)
    finally:
        facade.close()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kairox", "--home", str(kairox_home), "mcp", "--workspace", str(workspace)],
    )
    async with Client(params) as client:
        hits = _payload(
            await client.call_tool("workspace_search", {"query": "staging database port"})
        )
        assert isinstance(hits, list) and hits[0]["path"] == "notes.md"
        assert "5433" in hits[0]["text"]


async def test_stdio_server_with_a_new_session_name_creates_it(
    workspace: Path, kairox_home: Path
) -> None:
    """``kairox mcp --session NEW`` used to fail every memory tool with "no session 'mcp1'"."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m", "kairox", "--home", str(kairox_home),
            "mcp", "--workspace", str(workspace), "--session", "mcp1",
        ],
        env=dict(os.environ),  # the SDK passes only a few variables by default
    )  # fmt: skip
    async with Client(params) as client:
        proposed = await client.call_tool(
            "memory_propose", {"scope": "session", "key": "task", "body": "port the parser"}
        )
        assert not proposed.is_error, proposed
        assert _payload(proposed)["status"] == "accepted"  # type: ignore[index]
        listed = _payload(await client.call_tool("memory_list", {"scope": "session"}))
        assert isinstance(listed, list) and [m["body"] for m in listed] == ["port the parser"]
    facade = AppFacade.open(kairox_home)
    try:
        [session] = await facade.sessions.list(workspace=workspace)
        assert session.name == "mcp1"
    finally:
        facade.close()
