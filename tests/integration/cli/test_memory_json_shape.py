"""One JSON shape for a memory record: the CLI (``--json``), the web API and the MCP server emit
the same keys and values for the same record (``MemoryRecord.to_json``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
from mcp import Client

from kairox.app import AppFacade
from kairox.core.events import UntrustedInput
from kairox.core.ids import workspace_id_for
from kairox.core.types import MemoryScope
from kairox.mcp.server import build_server
from kairox.web import ServerOptions, WebServer


def cli_json(*args: str) -> object:
    done = subprocess.run(
        [sys.executable, "-m", "kairox", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def mcp_payload(result: object) -> object:
    structured = getattr(result, "structured_content", None)
    assert structured is not None, "memory tools answer with structured content"
    return structured.get("result", structured)


async def test_cli_web_and_mcp_emit_the_same_memory_json(
    kairox_home: Path, workspace: Path
) -> None:
    facade = AppFacade.open(kairox_home)
    try:
        proposed = facade.services.memories.propose(
            MemoryScope.WORKSPACE,
            "test.runner",
            "pytest -q",
            workspace_id=workspace_id_for(workspace),
            session_id="ses_json",
            turn=2,
            untrusted_inputs=[UntrustedInput(kind="tool_result", ref="seq:7")],
        )
        record = await facade.memory.approve(proposed.id)
        expected = record.to_json()
        assert set(expected) == set(type(record).model_fields)
        assert expected["untrusted_inputs"] == [{"kind": "tool_result", "ref": "seq:7"}]

        from_cli = cli_json("memory", "show", record.id)
        [listed] = cli_json("memory", "list", "--workspace", str(workspace))  # type: ignore[misc]

        with WebServer(ServerOptions(workspace=workspace, port=0, home=kairox_home)) as server:
            auth = {"Authorization": f"Bearer {server.token}"}
            async with httpx.AsyncClient(base_url=server.base_url, headers=auth, timeout=30) as web:
                from_web = (await web.get(f"/api/memories/{record.id}")).json()
                [web_listed] = (await web.get("/api/memories")).json()

        async with Client(build_server(facade, workspace=workspace)) as mcp:
            [from_mcp] = mcp_payload(await mcp.call_tool("memory_list", {}))  # type: ignore[misc]
            [searched] = mcp_payload(await mcp.call_tool("memory_search", {"query": "pytest"}))  # type: ignore[misc]

        for shape in (from_cli, listed, from_web, web_listed, from_mcp, searched):
            assert shape == expected
    finally:
        facade.close()
