"""Chat routes: sessions, a streamed turn over SSE, compaction (now and queued), profile, cancel."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from kairox.app import AppFacade

ParseSse = Callable[[str], list[tuple[str, dict[str, object]]]]
ClientFor = Callable[[list[dict[str, object]]], Awaitable[httpx.AsyncClient]]


async def _until(check: Callable[[], Awaitable[bool]], what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def test_info_and_profiles(client: httpx.AsyncClient, workspace: Path) -> None:
    info = (await client.get("/api/info")).json()
    assert info["workspace"] == str(workspace)  # tmp_path is already resolved
    assert info["workspace_id"].startswith("ws_")
    profiles = (await client.get("/api/profiles")).json()
    assert profiles["default"] == "local"
    assert {"alias": "local", "model": "local"} in profiles["profiles"]


async def test_profiles_with_a_broken_config_is_a_422(
    client: httpx.AsyncClient, workspace: Path
) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text('default_profile = "nope"\n')
    response = await client.get("/api/profiles")
    assert response.status_code == 422 and "config error" in response.json()["error"]


async def test_sessions_start_resume_list_get(client: httpx.AsyncClient) -> None:
    created = await client.post("/api/sessions", json={"name": "work"})
    assert created.status_code == 201
    again = await client.post("/api/sessions", json={"name": "work"})
    assert again.json()["id"] == created.json()["id"]
    listed = (await client.get("/api/sessions")).json()
    assert [s["name"] for s in listed] == ["work"]
    got = await client.get("/api/sessions/work")
    assert got.json()["profile"] == "local"


async def test_archive_and_unarchive_a_session(client: httpx.AsyncClient) -> None:
    await client.post("/api/sessions", json={"name": "old"})
    archived = await client.post("/api/sessions/old/archive")
    assert archived.status_code == 200 and archived.json()["archived"] is True
    assert (await client.get("/api/sessions")).json() == []
    listed = (await client.get("/api/sessions", params={"all": "true"})).json()
    assert [(s["name"], s["archived"]) for s in listed] == [("old", True)]
    refused = await client.post("/api/sessions/old/messages", json={"text": "hi"})
    assert refused.status_code == 409 and "archived" in refused.json()["error"]
    back = await client.post("/api/sessions/old/unarchive")
    assert back.json()["archived"] is False
    assert [s["name"] for s in (await client.get("/api/sessions")).json()] == ["old"]


async def test_session_errors(client: httpx.AsyncClient, facade: AppFacade, tmp_path: Path) -> None:
    assert (await client.get("/api/sessions/nope")).status_code == 404
    assert (await client.get("/api/sessions/nope/state")).status_code == 404
    assert (await client.post("/api/sessions", json={"name": "  "})).status_code == 422
    unknown = await client.post("/api/sessions", json={"name": "p", "profile": "nope"})
    assert unknown.status_code == 422 and "unknown profile" in unknown.json()["error"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    theirs = await facade.sessions.start("other", workspace=elsewhere, profile="local")
    # A session of another workspace is not this server's to show or resume (404, by name or
    # id, without saying where it lives); the name starts this workspace's own session.
    for ident in ("other", theirs.id):
        missing = await client.get(f"/api/sessions/{ident}")
        assert missing.status_code == 404 and str(elsewhere) not in missing.text
    assert "other" not in {s["name"] for s in (await client.get("/api/sessions")).json()}
    created = await client.post("/api/sessions", json={"name": "other"})
    assert created.status_code == 201 and created.json()["id"] != theirs.id


async def test_send_streams_events_then_done(
    client: httpx.AsyncClient, parse_sse: ParseSse
) -> None:
    await client.post("/api/sessions", json={"name": "s"})
    response = await client.post("/api/sessions/s/messages", json={"text": "hello"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    names = [name for name, _ in events]
    assert names[0] == "UserMessageAdded" and names[-1] == "done"
    assert "ContextAssembled" in names and "MemoryProposed" in names
    deltas = "".join(str(d["payload"]["text"]) for n, d in events if n == "ModelTokenDelta")  # type: ignore[index]
    assert deltas == "Noted.  Done."
    done = events[-1][1]
    assert done["reply"] == "Noted.  Done." and done["failure"] is None
    proposals = done["proposals"]
    assert isinstance(proposals, list) and proposals[0]["key"] == "editor.font"
    assert proposals[0]["status"] == "pending"
    state = (await client.get("/api/sessions/s/state")).json()
    assert state == {"state": "idle", "queued": 0}


async def test_send_errors(client: httpx.AsyncClient) -> None:
    missing = await client.post("/api/sessions/nope/messages", json={"text": "hi"})
    assert missing.status_code == 404 and missing.json()["error"] == "no session with name 'nope'"
    await client.post("/api/sessions", json={"name": "s"})
    assert (await client.post("/api/sessions/s/messages", json={"text": ""})).status_code == 422
    assert (await client.post("/api/sessions/s/messages", json={})).status_code == 422


async def test_a_failing_model_ends_the_stream_with_the_failure(
    client_for: ClientFor, parse_sse: ParseSse
) -> None:
    c = await client_for([{"error": "the scripted model broke"}])
    await c.post("/api/sessions", json={"name": "s"})
    events = parse_sse((await c.post("/api/sessions/s/messages", json={"text": "hi"})).text)
    assert events[-1][0] == "done"
    assert "the scripted model broke" in str(events[-1][1]["failure"])
    assert "TurnFailed" in [n for n, _ in events]


async def test_rejected_markers_reach_the_stream(
    client_for: ClientFor, parse_sse: ParseSse
) -> None:
    c = await client_for([{"text": 'Hi <memory scope="user">no key</memory>there'}])
    await c.post("/api/sessions", json={"name": "s"})
    events = parse_sse((await c.post("/api/sessions/s/messages", json={"text": "hi"})).text)
    [rejected] = [d for n, d in events if n == "MemoryMarkerRejected"]
    assert rejected["payload"] == {  # type: ignore[index]
        "type": "MemoryMarkerRejected",
        "turn": 1,
        "reason": "user memory needs a key",
        "raw": '<memory scope="user">no key</memory>',
    }
    assert events[-1][1]["reply"] == "Hi there"


async def test_compact_when_idle_completes(client: httpx.AsyncClient) -> None:
    await client.post("/api/sessions", json={"name": "s"})
    response = await client.post("/api/sessions/s/compact")
    assert response.status_code == 200
    assert response.json() == {
        "status": "completed",
        "state": "idle",
        "outcome": "skipped",
        "reason": "nothing to compact: only the latest turn is not summarised yet",
        "from_seq": None,
        "to_seq": None,
        "tokens_before": 0,
        "tokens_after": 0,
    }
    assert (await client.post("/api/sessions/nope/compact")).status_code == 404


async def test_compact_during_a_turn_is_queued_and_cancel_stops_the_turn(
    client_for: ClientFor, parse_sse: ParseSse
) -> None:
    c = await client_for([{"deltas": ["working"], "hang": True}])
    await c.post("/api/sessions", json={"name": "s"})
    turn = asyncio.create_task(c.post("/api/sessions/s/messages", json={"text": "long job"}))

    async def running() -> bool:
        return bool((await c.get("/api/sessions/s/state")).json()["state"] == "running_turn")

    await _until(running, "the turn to run")
    queued = await c.post("/api/sessions/s/compact")
    assert queued.json() == {
        "status": "queued",
        "state": "running_turn",
        "outcome": None,  # it has not run yet
        "reason": None,
        "from_seq": None,
        "to_seq": None,
        "tokens_before": None,
        "tokens_after": None,
    }
    assert (await c.get("/api/sessions/s/state")).json()["queued"] == 1
    assert (await c.post("/api/sessions/s/cancel")).json() == {"cancelled": True}
    events = parse_sse((await turn).text)
    assert events[-1][0] == "done" and events[-1][1]["failure"]

    async def compaction_ran() -> bool:
        types = {e["type"] for e in (await c.get("/api/events", params={"session": "s"})).json()}
        return bool(
            types
            & {"ContextCompactionSkipped", "ContextCompactionCompleted", "ContextCompactionFailed"}
        )

    await _until(compaction_ran, "the queued compaction")
    assert (await c.post("/api/sessions/s/cancel")).json() == {"cancelled": False}


async def test_profile_switch(client: httpx.AsyncClient, workspace: Path) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text(
        '[profiles.big]\nmodel = "local"\ncontext_window = 16384\n'
    )
    await client.post("/api/sessions", json={"name": "s"})
    switched = await client.post("/api/sessions/s/profile", json={"alias": "big"})
    assert switched.status_code == 200 and switched.json()["profile"] == "big"
    assert (await client.get("/api/sessions/s")).json()["profile"] == "big"
    unknown = await client.post("/api/sessions/s/profile", json={"alias": "nope"})
    assert unknown.status_code == 422 and "unknown profile 'nope'" in unknown.json()["error"]
    missing = await client.post("/api/sessions/nope/profile", json={"alias": "big"})
    assert missing.status_code == 404
    assert (await client.post("/api/sessions/nope/cancel")).status_code == 404


async def test_a_session_name_with_a_slash_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/sessions", json={"name": "a/b"})
    assert response.status_code == 422
    assert "cannot contain '/'" in response.json()["error"]


async def test_send_while_another_process_holds_the_session_is_409(
    client: httpx.AsyncClient, facade: AppFacade
) -> None:
    session = (await client.post("/api/sessions", json={"name": "s"})).json()
    facade.services.sessions.acquire_lease(session["id"], "another process", ttl_s=60)
    response = await client.post("/api/sessions/s/messages", json={"text": "hi"})
    assert response.status_code == 409
    assert response.json()["error"].startswith("session busy: 's'")
