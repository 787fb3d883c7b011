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
    # Another workspace's session is 404 here, by name or id, and the error never says where
    # it lives; creating the name starts this workspace's own session of that name.
    for ident in ("ops", theirs.id):
        refused = await client.get(f"/api/sessions/{ident}")
        assert refused.status_code == 404, refused.text
        assert where not in refused.text
    created = await client.post("/api/sessions", json={"name": "ops"})
    assert created.status_code == 201 and created.json()["workspace_path"] == here
