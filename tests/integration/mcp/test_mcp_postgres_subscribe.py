"""``resources/subscribe`` over HTTP on Postgres (issue 35): two ``kairox mcp --http`` servers
serve one store, and a client subscribed on the first hears a decision the CLI made in a third
process, as it does over stdio and over HTTP on SQLite."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp_helpers import authed, http_server, kairox, payload
from mcp_types import ResourceUpdatedNotification

NOTIFY_WITHIN_S = 20  # the bound; the test waits for the state, not for the time


async def test_a_subscriber_on_one_of_two_http_servers_hears_the_cli(
    workspace: Path, tmp_path: Path, pg_url: str
) -> None:
    home_a, home_b, home_cli = tmp_path / "a", tmp_path / "b", tmp_path / "cli"
    made = kairox(
        home_a, "tokens", "create", "team", "--workspace", str(workspace), store_url=pg_url
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    with (
        http_server(home_a, workspace, store_url=pg_url) as url_a,
        http_server(home_b, workspace, store_url=pg_url) as url_b,
    ):
        async with (
            Client(authed(url_a, token), mode="legacy", message_handler=on_message) as alice,
            Client(authed(url_b, token)) as bob,
        ):
            proposed = payload(
                await bob.call_tool(
                    "memory_propose", {"scope": "workspace", "key": "queue", "body": "RabbitMQ"}
                )
            )
            uri = f"kairox://memory/{proposed['id']}"
            with warnings.catch_warnings():  # resources/subscribe is the pre-2026 protocol's
                warnings.simplefilter("ignore")
                await alice.subscribe_resource(uri)
            approved = await anyio.to_thread.run_sync(
                lambda: kairox(home_cli, "memory", "approve", proposed["id"], store_url=pg_url)
            )
            assert approved.returncode == 0, approved.stderr
            with anyio.fail_after(NOTIFY_WITHIN_S):
                await arrived.wait()
            assert uri in updated


async def test_a_session_answers_only_the_token_that_opened_it(
    workspace: Path, kairox_home: Path
) -> None:
    import httpx2

    one = kairox(kairox_home, "tokens", "create", "one", "--workspace", str(workspace))
    two = kairox(kairox_home, "tokens", "create", "two", "--workspace", str(workspace))
    with http_server(kairox_home, workspace) as url:
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        accept = {"Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient() as http:
            opened = await http.post(
                url, json=hello, headers={**accept, "Authorization": f"Bearer {one.stdout.strip()}"}
            )
            session = opened.headers["mcp-session-id"]
            stolen = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
                headers={
                    **accept,
                    "Authorization": f"Bearer {two.stdout.strip()}",
                    "Mcp-Session-Id": session,
                },
            )
    assert stolen.status_code == 404 and "unknown session" in stolen.text
