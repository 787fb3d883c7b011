"""Issue 13 on the web: the server serves one workspace, so ``/api/sessions/{name}`` resolves the
name inside it, even when another workspace has a session of the same name."""

from __future__ import annotations

from pathlib import Path

import httpx

from kairox.app import AppFacade


async def test_names_resolve_in_the_servers_workspace(
    client: httpx.AsyncClient, facade: AppFacade, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    theirs = await facade.chat.open("main", workspace=other)
    here, where = (await client.get("/api/info")).json()["workspace"], theirs.workspace_path
    await facade.chat.open("ops", workspace=other)
    created = await client.post("/api/sessions", json={"name": "main"})
    assert created.status_code == 201
    mine = created.json()
    assert mine["id"] != theirs.id and mine["workspace_path"] == here
    assert (await client.get("/api/sessions/main")).json()["id"] == mine["id"]
    sent = await client.post(
        "/api/sessions/main/messages", json={"text": "hi"}, headers={"Accept": "application/json"}
    )
    assert sent.status_code == 200, sent.text
    events = (await client.get("/api/events", params={"session": "main"})).json()
    assert events and {e["session_id"] for e in events} == {mine["id"]}
    assert (await client.get("/api/sessions/main/context/turns")).json() == [1]
    archived = await client.post("/api/sessions/main/archive")
    assert archived.json()["id"] == mine["id"] and archived.json()["archived"]
    assert not (await facade.sessions.get(theirs.id)).archived
    listed = (await client.get("/api/sessions", params={"all": True})).json()
    assert [s["id"] for s in listed] == [mine["id"]]
    for refused in (
        await client.get("/api/sessions/ops"),
        await client.post("/api/sessions", json={"name": "ops"}),
    ):
        assert refused.status_code in (400, 409, 422), refused.text
        assert refused.json()["error"].startswith(f"session 'ops' lives in workspace {where}")
