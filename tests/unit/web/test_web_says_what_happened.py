"""The web API says what happened (issue 37): "Compact now" answers with the compaction's outcome
and reason, and the session list names the model that answered each session."""

from __future__ import annotations

import httpx


async def test_compact_now_says_it_skipped_and_why(client: httpx.AsyncClient) -> None:
    await client.post("/api/sessions", json={"name": "s"})
    assert (await client.post("/api/sessions/s/messages", json={"text": "one"})).is_success
    skipped = (await client.post("/api/sessions/s/compact")).json()
    assert skipped["status"] == "completed" and skipped["outcome"] == "skipped"
    assert skipped["reason"].startswith("nothing to compact")
    events = (await client.get("/api/events", params={"session": "s"})).json()
    [logged] = [e for e in events if e["type"] == "ContextCompactionSkipped"]
    assert logged["payload"]["reason"] == skipped["reason"]


async def test_compact_now_says_what_it_summarised(client: httpx.AsyncClient) -> None:
    await client.post("/api/sessions", json={"name": "s"})
    for text in ("one", "two", "three"):
        assert (await client.post("/api/sessions/s/messages", json={"text": text})).is_success
    done = (await client.post("/api/sessions/s/compact")).json()
    assert done["outcome"] == "summarised" and done["reason"] is None
    assert 0 < done["from_seq"] <= done["to_seq"]
    assert done["tokens_before"] > 0 and done["tokens_after"] > 0


async def test_the_session_list_names_the_model_that_answered(client: httpx.AsyncClient) -> None:
    await client.post("/api/sessions", json={"name": "s"})
    [fresh] = (await client.get("/api/sessions")).json()
    assert fresh["answered_by"] is None and fresh["profile"] == "local"
    assert (await client.post("/api/sessions/s/messages", json={"text": "hi"})).is_success
    [listed] = (await client.get("/api/sessions")).json()
    assert listed["profile"] == "local" and listed["answered_by"].startswith("scripted:")
