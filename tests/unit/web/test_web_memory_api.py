"""Memory routes: each one's success path and its error paths, through the real facade."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from kairox.app import AppFacade
from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope

Propose = Callable[..., MemoryRecord]


async def test_list_filters_by_scope_status_and_text(
    client: httpx.AsyncClient, propose: Propose
) -> None:
    a = propose("JetBrains Mono", key="editor.font")
    b = propose("Use pytest", key="tests.runner", scope=MemoryScope.WORKSPACE)
    await client.post(f"/api/memories/{b.id}/approve")

    everything = (await client.get("/api/memories")).json()
    assert {m["id"] for m in everything} == {a.id, b.id}
    user = (await client.get("/api/memories", params={"scope": "user"})).json()
    assert [m["id"] for m in user] == [a.id]
    accepted = (await client.get("/api/memories", params={"status": "accepted"})).json()
    assert [m["id"] for m in accepted] == [b.id]
    both = await client.get("/api/memories", params=[("status", "accepted"), ("status", "pending")])
    assert len(both.json()) == 2
    found = (await client.get("/api/memories", params={"text": "pytest"})).json()
    assert [m["id"] for m in found] == [b.id]


async def test_list_rejects_unknown_scope_with_one_line(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/memories", params={"scope": "galaxy"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert "scope" in error and "\n" not in error


async def test_session_memories_show_only_on_request(
    client: httpx.AsyncClient, facade: AppFacade, workspace: object
) -> None:
    await client.post("/api/sessions", json={"name": "s1"})
    info = await facade.sessions.get("s1")
    record = facade.services.memories.propose(
        MemoryScope.SESSION,
        None,
        "a session fact",
        workspace_id=info.workspace_id,
        session_id=info.id,
        turn=1,
    )
    plain = (await client.get("/api/memories")).json()
    assert record.id not in {m["id"] for m in plain}
    shown = (await client.get("/api/memories", params={"all_sessions": "true"})).json()
    assert record.id in {m["id"] for m in shown}
    by_session = (await client.get("/api/memories", params={"session": "s1"})).json()
    assert record.id in {m["id"] for m in by_session}


async def test_show_and_missing(client: httpx.AsyncClient, propose: Propose) -> None:
    record = propose("body")
    shown = await client.get(f"/api/memories/{record.id}")
    assert shown.status_code == 200 and shown.json()["body"] == "body"
    missing = await client.get("/api/memories/mem_missing")
    assert missing.status_code == 404
    assert missing.json() == {"error": "no memory with id 'mem_missing'"}


async def test_approve_with_edited_body_then_twice_is_a_no_op(
    client: httpx.AsyncClient, propose: Propose
) -> None:
    record = propose("JetBrains Mono")
    edited = await client.post(f"/api/memories/{record.id}/approve", json={"body": "Fira Code"})
    assert edited.status_code == 200
    assert edited.json()["status"] == "accepted" and edited.json()["body"] == "Fira Code"
    assert edited.json()["decided_by"] == "user"
    again = await client.post(f"/api/memories/{record.id}/approve")
    assert again.status_code == 200 and again.json()["version"] == edited.json()["version"]


async def test_approve_errors(client: httpx.AsyncClient, propose: Propose) -> None:
    assert (await client.post("/api/memories/mem_none/approve")).status_code == 404
    record = propose("x")
    empty = await client.post(f"/api/memories/{record.id}/approve", json={"body": ""})
    assert empty.status_code == 422
    await client.post(f"/api/memories/{record.id}/reject", json={"reason": "no"})
    conflict = await client.post(f"/api/memories/{record.id}/approve")
    assert conflict.status_code == 409
    assert "already rejected" in conflict.json()["error"]


async def test_reject_with_and_without_reason(client: httpx.AsyncClient, propose: Propose) -> None:
    first, second = propose("a", key="a"), propose("b", key="b")
    with_reason = await client.post(f"/api/memories/{first.id}/reject", json={"reason": "stale"})
    assert with_reason.json()["status"] == "rejected"
    assert with_reason.json()["decision_reason"] == "stale"
    plain = await client.post(f"/api/memories/{second.id}/reject")
    assert plain.json()["decision_reason"] == "rejected by the user"
    assert (await client.post("/api/memories/mem_none/reject")).status_code == 404


async def test_edit_delete_undo_history(client: httpx.AsyncClient, propose: Propose) -> None:
    record = propose("v1")
    await client.post(f"/api/memories/{record.id}/approve")
    edited = await client.patch(f"/api/memories/{record.id}", json={"body": "v2"})
    assert edited.status_code == 200 and edited.json()["body"] == "v2"
    undone = await client.post(f"/api/memories/{record.id}/undo")
    assert undone.json()["body"] == "v1"
    deleted = await client.delete(f"/api/memories/{record.id}")
    assert deleted.json()["status"] == "deleted"
    restored = await client.post(f"/api/memories/{record.id}/undo")
    assert restored.json()["status"] == "accepted"
    history = (await client.get(f"/api/memories/{record.id}/history")).json()
    assert [v["action"] for v in history][:3] == ["propose", "accept", "edit"]
    assert any(v["undone"] for v in history)


async def test_undoable_says_which_memories_undo_applies_to(
    client: httpx.AsyncClient, propose: Propose
) -> None:
    record, other = propose("v1"), propose("other")

    async def undoable() -> list[str]:
        ids = [record.id, other.id, "mem_missing", record.id]
        response = await client.post("/api/memories/undoable", json={"ids": ids})
        assert response.status_code == 200, response.text
        return list(response.json()["ids"])

    assert await undoable() == []
    assert (await client.post(f"/api/memories/{record.id}/undo")).status_code == 422
    await client.patch(f"/api/memories/{record.id}", json={"body": "v2"})
    assert await undoable() == [record.id]
    await client.post(f"/api/memories/{record.id}/undo")
    assert await undoable() == []
    await client.delete(f"/api/memories/{other.id}")
    assert await undoable() == [other.id]
    # The memory's JSON keeps the one shape the CLI and MCP emit.
    assert "undoable" not in (await client.get(f"/api/memories/{other.id}")).json()


async def test_edit_delete_undo_history_errors(client: httpx.AsyncClient) -> None:
    assert (await client.patch("/api/memories/mem_x", json={"body": "b"})).status_code == 404
    empty = await client.patch("/api/memories/mem_x", json={"body": ""})
    assert empty.status_code == 422 and "body" in empty.json()["error"]
    extra = await client.patch("/api/memories/mem_x", json={"body": "b", "evil": 1})
    assert extra.status_code == 422
    assert (await client.delete("/api/memories/mem_x")).status_code == 404
    assert (await client.post("/api/memories/mem_x/undo")).status_code == 404
    assert (await client.get("/api/memories/mem_x/history")).status_code == 404


async def test_undo_with_nothing_to_undo_is_a_4xx(
    client: httpx.AsyncClient, propose: Propose
) -> None:
    record = propose("only")
    response = await client.post(f"/api/memories/{record.id}/undo")
    assert 400 <= response.status_code < 500
    assert response.json()["error"]


async def test_export_and_import_round_trip(
    client: httpx.AsyncClient, propose: Propose, facade: AppFacade
) -> None:
    record = propose("<script>alert(1)</script>\n```code```", key="tricky")
    await client.post(f"/api/memories/{record.id}/approve")
    for fmt, filename in (("json", "kairox-memories.json"), ("markdown", "kairox-memories.md")):
        exported = (await client.get("/api/memories/export", params={"format": fmt})).json()
        assert exported["filename"] == filename and "tricky" in exported["content"]
        await client.patch(f"/api/memories/{record.id}", json={"body": "changed"})
        report = await client.post(
            "/api/memories/import", json={"format": fmt, "content": exported["content"]}
        )
        assert report.status_code == 200
        assert report.json()["replaced"] == [record.id]
        shown = (await client.get(f"/api/memories/{record.id}")).json()
        assert shown["body"] == "<script>alert(1)</script>\n```code```"
    events = await facade.events.list()
    assert sum(e.type == "MemoryAccepted" for e in events) == 3  # approve + two imports


async def test_import_errors_are_422(client: httpx.AsyncClient) -> None:
    bad_json = await client.post("/api/memories/import", json={"format": "json", "content": "{"})
    assert bad_json.status_code == 422 and "not valid JSON" in bad_json.json()["error"]
    bad_md = await client.post(
        "/api/memories/import", json={"format": "markdown", "content": "just prose"}
    )
    assert bad_md.status_code == 422
    bad_format = await client.post("/api/memories/import", json={"format": "xml", "content": ""})
    assert bad_format.status_code == 422
    bad_export = await client.get("/api/memories/export", params={"format": "xml"})
    assert bad_export.status_code == 422


async def test_decisions_that_conflict_with_the_status_are_409(
    client: httpx.AsyncClient, propose: Propose
) -> None:
    record = propose("x")
    await client.post(f"/api/memories/{record.id}/approve")
    rejected = await client.post(f"/api/memories/{record.id}/reject")
    assert rejected.status_code == 409 and "already accepted" in rejected.json()["error"]
    first = await client.delete(f"/api/memories/{record.id}")
    assert first.status_code == 200
    again = await client.delete(f"/api/memories/{record.id}")  # deleting twice changes nothing
    assert again.status_code == 200 and again.json()["version"] == first.json()["version"]


async def test_the_search_box_finds_memories_without_the_exact_text(
    client: httpx.AsyncClient, propose: Propose
) -> None:
    """The memory browser's search box goes through the memory search: a memory matches
    without containing the typed text, and one containing it ranks first."""
    runner = propose("Use pytest for every test", key="tests.runner", scope=MemoryScope.WORKSPACE)
    font = propose("JetBrains Mono", key="editor.font")
    found = (await client.get("/api/memories", params={"text": "which tests framework"})).json()
    assert [m["id"] for m in found] == [runner.id]
    exact = propose("Mono fonts only in the terminal", key="terminal.font")
    both = (await client.get("/api/memories", params={"text": "jetbrains mono"})).json()
    assert [m["id"] for m in both][:2] == [font.id, exact.id]
