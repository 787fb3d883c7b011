"""MCP answers a newcomer can read (issue 37): a search with no hits is ``[]`` in the text content
too, and a rejected proposal's history says why it was refused."""

from __future__ import annotations

from pathlib import Path

from mcp import Client
from mcp.client.stdio import stdio_client
from mcp_helpers import payload, stdio_params

from kairox.app import AppFacade
from kairox.core.types import MemoryScope
from kairox.mcp.server import build_server


async def test_no_hits_is_an_empty_json_list_in_the_text_too(
    workspace: Path, kairox_home: Path, tmp_path: Path
) -> None:
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(stdio_params(kairox_home, workspace), errlog)) as client:
            for tool, args in (
                ("memory_search", {"query": "nothing like this"}),
                ("memory_list", {"status": "all"}),
                ("recall_history", {"query": "nothing"}),
            ):
                result = await client.call_tool(tool, args)
                assert not result.is_error, tool
                assert [c.text for c in result.content] == ["[]"], tool
                assert payload(result) == []


async def test_a_rejected_proposal_says_why_in_its_history(
    workspace: Path, kairox_home: Path, on_store: str | None
) -> None:
    with AppFacade.open(kairox_home) as facade:
        routed = await facade.memory.propose(
            scope=MemoryScope.USER,
            key="editor.font",
            body="Comic Sans",
            workspace=workspace,
            session=None,
        )
        await facade.memory.reject(routed.record.id, reason="we use a monospace font")
        async with Client(build_server(facade, workspace=workspace)) as client:
            got = payload(await client.call_tool("memory_get", {"memory_id": routed.record.id}))
            history = payload(
                await client.call_tool("memory_history", {"memory_id": routed.record.id})
            )
        await facade.aclose()
    assert got["decision_reason"] == "we use a monospace font"
    assert [(v["action"], v["reason"]) for v in history] == [
        ("propose", None),
        ("reject", "we use a monospace font"),
    ]
