"""MCP resources and prompts, and resource updates driven by the store's event hub: a decision
made by another process (the CLI) reaches a subscribed client over stdio and over HTTP."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_helpers import authed, http_server, kairox, payload, stdio_params
from mcp_types import ResourceUpdatedNotification

from kairox.app import AppFacade
from kairox.core.types import MemoryScope
from kairox.mcp.server import build_server

# An upper bound for a notification that is expected: the test waits for the state, and fails
# only when it never arrives.
NOTIFY_TIMEOUT_S = 60


def _text(result: Any) -> str:
    return str(result.contents[0].text)


async def test_resources_and_prompts(workspace: Path, kairox_home: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "Noted."}) + "\n")
    with AppFacade.open(kairox_home, model=f"scripted:{script}") as facade:
        info = await facade.chat.open("main", workspace=workspace)
        await facade.chat.run(info.id, "our release train leaves every second Tuesday")
        routed = await facade.memory.propose(
            workspace=workspace, session=None, scope=MemoryScope.WORKSPACE, key="vcs", body="jj"
        )
        async with Client(build_server(facade, workspace=workspace)) as client:
            templates = {
                t.uri_template for t in (await client.list_resource_templates()).resource_templates
            }
            assert templates == {
                "kairox://memories/{scope}",
                "kairox://memory/{memory_id}",
                "kairox://sessions/{name}/context",
            }
            scoped = json.loads(_text(await client.read_resource("kairox://memories/workspace")))
            assert [(m["key"], m["status"]) for m in scoped] == [("vcs", "pending")]
            one = json.loads(
                _text(await client.read_resource(f"kairox://memory/{routed.record.id}"))
            )
            assert (one["body"], one["version"], one["untrusted_inputs"]) == (
                "jj",
                0,
                [],
            )  # pending
            context = json.loads(
                _text(await client.read_resource("kairox://sessions/main/context"))
            )
            assert context["turn"] == 1 and "history" not in {
                s["source"] for s in context["sources"]
            }
            assert {"system", "prompt"} <= {s["source"] for s in context["sources"]}
            try:
                await client.read_resource("kairox://memories/global")
                raise AssertionError("an unknown scope was read")
            except MCPError as exc:
                assert "unknown memory scope 'global'" in str(exc)
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            assert prompts == {"memory-protocol", "recall"}
            protocol = (await client.get_prompt("memory-protocol")).messages[0].content.text
            assert '<memory scope="workspace" key="stable.key">' in protocol
            recalled = (
                (
                    await client.get_prompt(
                        "recall", {"question": "when does the release train leave?"}
                    )
                )
                .messages[0]
                .content.text
            )
            assert "second Tuesday" in recalled and "reference data" in recalled
        await facade.aclose()


async def _approve_elsewhere(home: Path, memory_id: str, store_url: str | None = None) -> None:
    done = await anyio.to_thread.run_sync(
        lambda: kairox(home, "memory", "approve", memory_id, store_url=store_url)
    )
    assert done.returncode == 0, done.stderr


async def test_resources_subscribe_over_stdio_hears_a_decision_made_by_the_cli(
    workspace: Path, kairox_home: Path
) -> None:
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    params = stdio_params(kairox_home, workspace)
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        assert client.server_capabilities.resources.subscribe is True
        proposed = payload(
            await client.call_tool(
                "memory_propose", {"scope": "user", "key": "shell", "body": "fish"}
            )
        )
        uri = f"kairox://memory/{proposed['id']}"
        with warnings.catch_warnings():  # resources/subscribe is the pre-2026 protocol's
            warnings.simplefilter("ignore")
            await client.subscribe_resource(uri)
        await _approve_elsewhere(kairox_home, proposed["id"])
        with anyio.fail_after(NOTIFY_TIMEOUT_S):
            await arrived.wait()
        assert uri in updated
        after = json.loads(_text(await client.read_resource(uri)))
        assert after["status"] == "accepted"


async def test_listen_over_http_hears_a_decision_made_by_the_cli(
    workspace: Path, kairox_home: Path
) -> None:
    done = kairox(kairox_home, "tokens", "create", "bot", "--workspace", str(workspace))
    token = done.stdout.strip()
    with http_server(kairox_home, workspace) as url:
        async with Client(authed(url, token)) as client:
            proposed = payload(
                await client.call_tool(
                    "memory_propose", {"scope": "workspace", "key": "lint", "body": "ruff"}
                )
            )
            uris = [f"kairox://memory/{proposed['id']}", "kairox://memories/workspace"]
            async with client.listen(resource_subscriptions=uris) as events:
                await _approve_elsewhere(kairox_home, proposed["id"])
                heard: set[str] = set()
                with anyio.fail_after(NOTIFY_TIMEOUT_S):
                    async for event in events:
                        heard.add(event.uri)
                        if heard == set(uris):
                            break
            listed = payload(await client.call_tool("memory_list", {"scope": "workspace"}))
            assert [m["status"] for m in listed] == ["accepted"]
