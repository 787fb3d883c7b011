"""Context inspector and event routes: traces, summaries, replay, the log and its live stream."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx

ParseSse = Callable[[str], list[tuple[str, dict[str, object]]]]


async def _three_turns(client: httpx.AsyncClient) -> None:
    await client.post("/api/sessions", json={"name": "s"})
    for text in ("one", "two", "three"):
        response = await client.post("/api/sessions/s/messages", json={"text": text})
        assert response.status_code == 200


async def test_turns_trace_and_replay(client: httpx.AsyncClient) -> None:
    await _three_turns(client)
    assert (await client.get("/api/sessions/s/context/turns")).json() == [1, 2, 3]
    last = (await client.get("/api/sessions/s/context")).json()
    assert last["turn"] == 3
    first = (await client.get("/api/sessions/s/context", params={"turn": 1})).json()
    assert first["turn"] == 1 and first["budget"] == first["window"] - first["headroom"]
    assert set(first["by_source"]) == {
        "system",
        "memory",
        "workspace",
        "knowledge_base",
        "recall",
        "summary",
        "history",
        "prompt",
    }
    assert sum(first["by_source"].values()) == first["used"]
    assert any(i["source"] == "prompt" and i["included"] for i in first["items"])
    replay = (await client.get("/api/sessions/s/context/replay", params={"turn": 2})).json()
    assert replay[0]["role"] == "system" and replay[-1] == {
        "role": "user",
        "content": "two",
        "tool_calls": [],
        "tool_call_id": None,
        "name": None,
    }


async def test_an_item_expands_to_the_text_the_model_saw(client: httpx.AsyncClient) -> None:
    await _three_turns(client)
    trace = (await client.get("/api/sessions/s/context", params={"turn": 2})).json()
    replay = (await client.get("/api/sessions/s/context/replay", params={"turn": 2})).json()
    refs = {i["source"]: i["ref"] for i in trace["items"] if i["included"]}
    url = "/api/sessions/s/context/item"
    prompt = (await client.get(url, params={"turn": 2, "ref": refs["prompt"]})).json()
    assert prompt == {"turn": 2, "ref": refs["prompt"], "text": "two"}
    system = (await client.get(url, params={"turn": 2, "ref": refs["system"]})).json()
    assert system["text"] == replay[0]["content"]
    history = (await client.get(url, params={"turn": 2, "ref": refs["history"]})).json()
    assert history["text"].startswith("[") and refs["history"].startswith("seq:")
    missing = await client.get(url, params={"turn": 2, "ref": "mem:nope@v1"})
    assert missing.status_code == 404 and "mem:nope@v1" in missing.json()["error"]
    assert (await client.get(url, params={"turn": 9, "ref": "prompt"})).status_code == 404


async def test_context_errors(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/sessions/nope/context/turns")).status_code == 404
    assert (await client.get("/api/sessions/nope/context")).status_code == 404
    await client.post("/api/sessions", json={"name": "s"})
    none_yet = await client.get("/api/sessions/s/context")
    assert none_yet.status_code == 404
    assert none_yet.json()["error"] == "no context trace with id 's any turn'"
    assert (await client.get("/api/sessions/s/context", params={"turn": 9})).status_code == 404
    assert (await client.get("/api/sessions/s/context", params={"turn": -1})).status_code == 422
    missing = await client.get("/api/sessions/s/context/replay", params={"turn": 9})
    assert missing.status_code == 404
    assert (await client.get("/api/sessions/s/context/replay")).status_code == 422
    assert (await client.get("/api/sessions/s/context/summaries")).json() == []


async def test_summaries_carry_the_replaced_range(client: httpx.AsyncClient) -> None:
    await _three_turns(client)
    assert (await client.post("/api/sessions/s/compact")).json()["status"] == "completed"
    summaries = (await client.get("/api/sessions/s/context/summaries")).json()
    assert len(summaries) == 1
    summary = summaries[0]
    assert summary["text"] == "A summary of earlier talk." and not summary["fallback"]
    assert 0 < summary["from_seq"] <= summary["to_seq"] < summary["seq"]
    assert (await client.get("/api/sessions/nope/context/summaries")).status_code == 404


async def test_recall_searches_the_session_history(client: httpx.AsyncClient) -> None:
    await client.post("/api/sessions", json={"name": "s"})
    empty = (await client.get("/api/sessions/s/context/recall", params={"q": "two"})).json()
    assert empty == {
        "query": "two",
        "scope": "session",
        "indexed": 0,
        "floor": 0.2,
        "below_floor": 0,
        "hits": [],
    }
    await _three_turns(client)
    found = await client.get("/api/sessions/s/context/recall", params={"q": "two", "k": 1})
    assert found.status_code == 200
    body = found.json()
    assert body["indexed"] == 6 and body["scope"] == "session"
    [hit] = body["hits"]
    assert (hit["session"], hit["turn"], hit["role"], hit["snippet"]) == ("s", 2, "user", "two")
    assert hit["time"].endswith("Z") and hit["seq"] > 0
    wide = await client.get(
        "/api/sessions/s/context/recall", params={"q": "reply", "scope": "workspace"}
    )
    assert wide.json()["scope"] == "workspace" and wide.json()["hits"]
    assert (await client.get("/api/sessions/s/context/recall")).status_code == 422
    bad = await client.get("/api/sessions/s/context/recall", params={"q": "x", "scope": "all"})
    assert bad.status_code == 422
    assert (
        await client.get("/api/sessions/nope/context/recall", params={"q": "x"})
    ).status_code == 404


async def test_events_list_last_and_errors(client: httpx.AsyncClient) -> None:
    await _three_turns(client)
    everything = (await client.get("/api/events")).json()
    seqs = [e["seq"] for e in everything]
    assert seqs == sorted(seqs) and everything[0]["type"] == "SessionStarted"
    last = (await client.get("/api/events/last")).json()["last_seq"]
    assert last == seqs[-1]
    page = (await client.get("/api/events", params={"after": seqs[2], "limit": 2})).json()
    assert [e["seq"] for e in page] == seqs[3:5]
    of_session = (await client.get("/api/events", params={"session": "s"})).json()
    assert all(e["session_id"] == everything[0]["session_id"] for e in of_session)
    assert (await client.get("/api/events", params={"session": "nope"})).status_code == 404
    assert (await client.get("/api/events", params={"limit": 0})).status_code == 422
    assert (await client.get("/api/events", params={"after": -1})).status_code == 422


async def test_stream_replays_from_after_and_from_last_event_id(
    client: httpx.AsyncClient, parse_sse: ParseSse
) -> None:
    await client.post("/api/sessions", json={"name": "s"})
    await client.post("/api/sessions", json={"name": "t"})
    response = await client.get("/api/events/stream", params={"after": 0, "limit": 2})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    assert [name for name, _ in events] == ["SessionStarted", "SessionStarted"]
    assert "id: 1\n" in response.text
    resumed = await client.get(
        "/api/events/stream", params={"after": 0, "limit": 1}, headers={"Last-Event-ID": "1"}
    )
    assert parse_sse(resumed.text)[0][1]["seq"] == 2
    assert (await client.get("/api/events/stream", params={"session": "x"})).status_code == 404


async def test_stream_follows_changes_made_after_it_started(
    client: httpx.AsyncClient, parse_sse: ParseSse, propose: Callable[..., object]
) -> None:
    follow = asyncio.create_task(client.get("/api/events/stream", params={"limit": 1}))
    deadline = time.monotonic() + 20
    # The stream starts "now", so keep writing until it has seen a write made after it started
    # (each body differs: an identical proposal writes nothing).
    written = 0
    while not follow.done():
        assert time.monotonic() < deadline, "the stream never saw the change"
        written += 1
        propose(f"written by another surface, {written}")
        await asyncio.sleep(0.05)
    events = parse_sse((await follow).text)
    assert events[0][0] == "MemoryProposed"
    payload = events[0][1]["payload"]
    assert isinstance(payload, dict)
    assert str(payload["body"]).startswith("written by another surface, ")


async def test_stream_rejects_bad_cursors(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/events/stream", params={"after": -1})).status_code == 422
    assert (await client.get("/api/events/stream", params={"limit": 0})).status_code == 422
    too_big = await client.get("/api/events", params={"after": 2**70})
    assert too_big.status_code == 422
    bad_id = await client.get("/api/events/stream", headers={"Last-Event-ID": "x"})
    assert bad_id.status_code == 422
