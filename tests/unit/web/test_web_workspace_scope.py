"""``kairox serve --workspace A`` serves A: the event list and stream carry only A's events, and a
session or memory of another workspace is 404 by id, by prefix or by name (user memories stay
visible, as in the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from kairox.app import AppFacade
from kairox.core.ids import workspace_id_for
from kairox.core.types import MemoryScope, MemoryStatus


async def test_another_workspace_is_404_on_every_route(
    client: httpx.AsyncClient, facade: AppFacade, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    theirs = await facade.chat.open("ops", workspace=other)
    outcome = await facade.chat.run(theirs.id, "my tool output is secret")  # a turn in B
    [user_memory] = outcome.proposals  # the scripted reply proposes a user memory
    assert user_memory.scope is MemoryScope.USER
    memories = facade.services.memories
    ws_b = workspace_id_for(other)
    b_memory = memories.propose(
        MemoryScope.WORKSPACE, "b.key", "B's secret", workspace_id=ws_b, session_id=None
    )
    b_session_memory = memories.propose(
        MemoryScope.SESSION, None, "B's session note", workspace_id=ws_b, session_id=theirs.id
    )
    mine = (await client.post("/api/sessions", json={"name": "main"})).json()

    events = (await client.get("/api/events")).json()
    assert events and {e["workspace_id"] for e in events} == {workspace_id_for(workspace)}
    assert not any("secret" in json.dumps(e) for e in events)
    # The stream from the start carries the same events, and no other workspace's.
    async with client.stream(
        "GET", "/api/events/stream", params={"after": 0, "limit": len(events)}
    ) as stream:
        body = "".join([chunk async for chunk in stream.aiter_text()])
    streamed = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
    assert [e["seq"] for e in streamed] == [e["seq"] for e in events]

    for memory in (b_memory, b_session_memory):
        for ident in (memory.id, memory.id[4:22]):  # the id, and a unique prefix of it
            for method, path, payload in (
                ("GET", f"/api/memories/{ident}", None),
                ("GET", f"/api/memories/{ident}/history", None),
                ("POST", f"/api/memories/{ident}/approve", {}),
                ("POST", f"/api/memories/{ident}/reject", {}),
                ("PATCH", f"/api/memories/{ident}", {"body": "edited by A"}),
                ("DELETE", f"/api/memories/{ident}", None),
                ("POST", f"/api/memories/{ident}/undo", None),
            ):
                response = await client.request(method, path, json=payload)
                assert response.status_code == 404, (method, path, response.text)
                assert str(other) not in response.text
        assert memories.get(memory.id).status is MemoryStatus.PENDING  # nothing changed
    undoable = await client.post("/api/memories/undoable", json={"ids": [b_memory.id]})
    assert undoable.json() == {"ids": []}
    listed = (await client.get("/api/memories", params={"all_sessions": True})).json()
    assert [m["id"] for m in listed] == [user_memory.id]  # the user's memory stays visible
    assert (await client.get(f"/api/memories/{user_memory.id}")).status_code == 200

    for method, path, payload in (
        ("GET", f"/api/sessions/{theirs.id}", None),
        ("GET", f"/api/sessions/{theirs.id}/state", None),
        ("POST", f"/api/sessions/{theirs.id}/messages", {"text": "run in B"}),
        ("POST", f"/api/sessions/{theirs.id}/compact", None),
        ("POST", f"/api/sessions/{theirs.id}/archive", None),
        ("GET", f"/api/sessions/{theirs.id}/context/turns", None),
        ("GET", "/api/sessions/ops", None),
        ("GET", "/api/events", {"session": theirs.id}),
        ("GET", "/api/memories", {"session": theirs.id}),
    ):
        if method == "GET" and payload is not None:
            response = await client.get(path, params=payload)
        else:
            response = await client.request(method, path, json=payload)
        assert response.status_code == 404, (method, path, response.text)
        assert str(other) not in response.text
    opened = await client.post("/api/sessions", json={"name": theirs.id})
    assert opened.status_code == 404, opened.text
    assert (await facade.sessions.get(theirs.id)).archived is False
    after = await facade.events.list(session=theirs.id)
    assert [e.payload.text for e in after if e.type == "UserMessageAdded"] == [  # type: ignore[union-attr]
        "my tool output is secret"
    ]
    assert mine["workspace_id"] == workspace_id_for(workspace)

    # A user memory of no workspace (imported, say) is home-wide: the page that shows it sees
    # its events.
    home = memories.propose(MemoryScope.USER, "u.key", "home-wide", workspace_id=None,
                            session_id=None)  # fmt: skip
    await facade.memory.approve(home.id)
    decided = (await client.get("/api/events", params={"after": events[-1]["seq"]})).json()
    assert [(e["type"], e["payload"]["memory_id"]) for e in decided] == [
        ("MemoryProposed", home.id),
        ("MemoryAccepted", home.id),
    ]
