"""MCP ``memory_update`` of a pending memory updates that pending row (issue 33, Low): the key
never holds a second pending proposal, and the taint the client had received joins the row.
On both stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import Client

from kairox.app import AppFacade
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.mcp.server import build_server
from kairox.services import Services


def _payload(result: Any) -> Any:
    return json.loads(result.content[0].text)


async def test_updating_a_pending_memory_changes_that_row(
    kairox_home: Path, workspace: Path, store_url: str | None
) -> None:
    (workspace / "notes.md").write_text("The CI runs on Buildkite since March.\n")
    facade = AppFacade(Services.open(kairox_home, store_url=store_url))
    try:
        async with Client(build_server(facade, workspace=workspace)) as client:
            proposed = _payload(
                await client.call_tool(
                    "memory_propose", {"scope": "workspace", "key": "ci", "body": "Jenkins"}
                )
            )
            assert proposed["status"] == "pending" and proposed["untrusted_inputs"] == []
            await client.call_tool("workspace_search", {"query": "Buildkite"})  # untrusted text
            changed = _payload(
                await client.call_tool(
                    "memory_update", {"memory_id": proposed["id"], "body": "Buildkite"}
                )
            )
        assert changed["id"] == proposed["id"] and changed["status"] == "pending"
        pending = await facade.memory.list(
            workspace=workspace, scopes=[MemoryScope.WORKSPACE], statuses=[MemoryStatus.PENDING]
        )
        assert [(m.id, m.body) for m in pending] == [(proposed["id"], "Buildkite")]
        assert pending[0].untrusted_inputs  # the search result it followed taints it
    finally:
        await facade.aclose()
        facade.close()
