"""A team's memory on Postgres: two ``kairox mcp --http`` processes (separate homes, as on two
machines) serve one store; each sees the other's proposals, and a decision made with the CLI
reaches the clients of both as resource updates."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client
from mcp_helpers import authed, http_server, kairox, payload

NOTIFY_TIMEOUT_S = 60  # a bound for an expected notification: the test waits for the state


async def test_two_http_servers_on_one_postgres_share_proposals_and_decisions(
    workspace: Path, tmp_path: Path, pg_url: str
) -> None:
    home_a, home_b, home_cli = tmp_path / "a", tmp_path / "b", tmp_path / "cli"
    made = kairox(
        home_a, "tokens", "create", "team", "--workspace", str(workspace), store_url=pg_url
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    with (
        http_server(home_a, workspace, store_url=pg_url) as url_a,
        http_server(home_b, workspace, store_url=pg_url) as url_b,
    ):
        async with Client(authed(url_a, token)) as alice, Client(authed(url_b, token)) as bob:
            proposed = payload(
                await alice.call_tool(
                    "memory_propose", {"scope": "workspace", "key": "db", "body": "Postgres 18"}
                )
            )
            seen = payload(await bob.call_tool("memory_list", {"status": "pending"}))
            assert [m["id"] for m in seen] == [proposed["id"]]
            uri = f"kairox://memory/{proposed['id']}"
            async with bob.listen(resource_subscriptions=[uri]) as events:
                approved = kairox(home_cli, "memory", "approve", proposed["id"], store_url=pg_url)
                assert approved.returncode == 0, approved.stderr
                with anyio.fail_after(NOTIFY_TIMEOUT_S):
                    event = await anext(aiter(events))
                assert event.uri == uri
            got = payload(await alice.call_tool("memory_get", {"memory_id": proposed["id"]}))
            assert got["status"] == "accepted"
            change = payload(
                await bob.call_tool(
                    "memory_update", {"memory_id": proposed["id"], "body": "Postgres 18.1"}
                )
            )
            assert change["status"] == "pending" and change["replaces_body"] == "Postgres 18"
            pending = payload(await alice.call_tool("memory_list", {"status": "pending"}))
            assert [m["id"] for m in pending] == [change["id"]]
