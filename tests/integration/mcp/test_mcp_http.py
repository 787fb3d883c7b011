"""``kairox mcp --http`` and ``kairox tokens``: real server processes, the official client over
streamable HTTP, tokens stored hashed on both store backends."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_helpers import authed, error_text, http_server, kairox, payload

from kairox.app import AppFacade
from kairox.services import Services


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _create(home: Path, name: str, *args: str, store_url: str | None = None) -> str:
    done = kairox(home, "tokens", "create", name, *args, store_url=store_url)
    assert done.returncode == 0, done.stderr
    secret = done.stdout.strip()
    assert "\n" not in secret and secret.startswith("kxt_")
    return secret


@pytest.mark.parametrize("store_url", ["sqlite", "postgres"], indirect=True)
def test_tokens_are_printed_once_stored_hashed_listed_with_last_use_and_revoked(
    kairox_home: Path, workspace: Path, store_url: str | None
) -> None:
    secret = _create(kairox_home, "ci", "--workspace", str(workspace), store_url=store_url)
    again = kairox(kairox_home, "tokens", "create", "ci", store_url=store_url)
    assert again.returncode == 1 and "a token named 'ci' exists" in again.stderr
    listed = kairox(kairox_home, "tokens", "list", "--json", store_url=store_url)
    [row] = json.loads(listed.stdout)
    assert row["name"] == "ci" and row["last_used_at"] is None
    assert row["workspaces"] == [str(workspace.resolve())] and row["read_only"] is False
    assert secret not in listed.stdout
    services = Services.open(kairox_home, store_url=store_url)
    try:
        stored = services.db.query("SELECT * FROM access_tokens")
        assert len(stored) == 1 and secret not in json.dumps([dict(r) for r in stored])
    finally:
        services.close()
    with AppFacade(Services.open(kairox_home, store_url=store_url)) as facade:
        import asyncio

        used = asyncio.run(facade.tokens.authenticate(secret))
        assert used is not None and used.name == "ci"
    table = kairox(kairox_home, "tokens", "list", store_url=store_url).stdout
    assert "ci" in table and "never" not in table
    revoked = kairox(kairox_home, "tokens", "revoke", "ci", store_url=store_url)
    assert revoked.returncode == 0 and "revoked token 'ci'" in revoked.stdout
    assert "no tokens" in kairox(kairox_home, "tokens", "list", store_url=store_url).stdout
    missing = kairox(kairox_home, "tokens", "revoke", "ci", store_url=store_url)
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1


async def test_http_server_serves_tokens_of_its_workspace_and_refuses_the_rest(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    writer = _create(kairox_home, "writer", "--workspace", str(workspace))
    reader = _create(kairox_home, "reader", "--workspace", str(workspace), "--read-only")
    elsewhere = _create(kairox_home, "elsewhere", "--workspace", str(other))
    with http_server(kairox_home, workspace) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        async with Client(authed(url, writer)) as client:
            proposed = payload(
                await client.call_tool(
                    "memory_propose", {"scope": "workspace", "key": "ci", "body": "GitHub Actions"}
                )
            )
            assert proposed["status"] == "pending"
        async with Client(authed(url, reader)) as client:
            listed = payload(await client.call_tool("memory_list", {"status": "pending"}))
            assert [m["key"] for m in listed] == ["ci"]
            refused = error_text(
                await client.call_tool(
                    "memory_propose", {"scope": "workspace", "key": "x", "body": "y"}
                )
            )
            assert refused.startswith("memory_propose: the token 'reader' is read-only")
            for tool, args in (
                ("memory_update", {"memory_id": proposed["id"], "body": "Buildkite"}),
                ("memory_delete", {"memory_id": proposed["id"]}),
                ("memory_extract", {"messages": [{"role": "user", "content": "I use vim"}]}),
            ):
                assert "read-only" in error_text(await client.call_tool(tool, args))
        for token in ("kxt_not-a-token", elsewhere):  # the status codes are checked below
            with pytest.raises(BaseException) as caught:
                async with Client(authed(url, token)) as client:
                    await client.list_tools()
            assert any(isinstance(leaf, MCPError) for leaf in _leaves(caught.value))
        async with httpx2.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            answers = {
                "no token": await http.post(url, json=body),
                "bad token": await http.post(url, json=body, headers={"Authorization": "Bearer x"}),
                "other workspace": await http.post(
                    url, json=body, headers={"Authorization": f"Bearer {elsewhere}"}
                ),
                "bad host": await http.post(
                    url, json=body, headers={"Host": "evil.example:80", "Authorization": writer}
                ),
                "bad origin": await http.post(
                    url,
                    json=body,
                    headers={"Origin": "http://evil.example", "Authorization": f"Bearer {writer}"},
                ),
            }
    statuses = {what: r.status_code for what, r in answers.items()}
    assert statuses == {
        "no token": 401,
        "bad token": 401,
        "other workspace": 403,
        "bad host": 400,
        "bad origin": 403,
    }
    for answer in answers.values():
        assert answer.text.count("\n") == 1
    assert "kairox tokens create" in answers["no token"].text
    assert "not for the workspace" in answers["other workspace"].text
    with AppFacade.open(kairox_home) as facade:
        infos = {i.name: i for i in await facade.tokens.list()}
    assert infos["writer"].last_used_at is not None
    assert infos["elsewhere"].last_used_at is not None  # identified, then refused


def test_binding_beyond_loopback_needs_allow_remote_and_warns_without_tls(
    kairox_home: Path, workspace: Path
) -> None:
    refused = kairox(
        kairox_home, "mcp", "--http", "--host", "0.0.0.0", "--port", "0",
        "--workspace", str(workspace),
    )  # fmt: skip
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith("pass --allow-remote to expose it (anyone with the "
                                           "token gets full access)")  # fmt: skip
    assert refused.stderr.count("\n") == 1
    with http_server(
        kairox_home, workspace, "--host", "0.0.0.0", "--allow-remote", stderr=True
    ) as started:
        assert started.url.endswith("/mcp")
    assert "without TLS" in started.stderr and "TLS proxy" in started.stderr
