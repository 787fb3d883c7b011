"""The Pinecone knowledge base, through the ``pinecone`` SDK, against a loopback fake of the
documented "search records" API (the SDK's ``host`` setting points it there). Retries are the
SDK's own: these tests count the requests, not the delays."""

from __future__ import annotations

import pytest
from kbfakes import RELEVANT_ID, RELEVANT_QUERY, FakePinecone
from kbfakes.wiring import pinecone_setup

from kairox.core.errors import RetrievalError
from kairox.retrieval.knowledge_bases import create_knowledge_base


def _kb(server: FakePinecone, env: dict[str, str] | None = None, **kw: object):
    config, default_env = pinecone_setup(server, **kw)
    return create_knowledge_base("pc", config, env=default_env if env is None else env)


async def test_sends_the_documented_request_and_maps_hits(pinecone_server: FakePinecone) -> None:
    hits = await _kb(pinecone_server).search(RELEVANT_QUERY, k=2)

    assert pinecone_server.rejections == []
    request = pinecone_server.accepted[0]
    assert request.path == "/records/namespaces/docs/search"
    assert request.headers["api-key"] == pinecone_server.api_key
    assert request.headers["x-pinecone-api-version"] == "2025-04"
    assert request.json() == {
        "query": {"inputs": {"text": RELEVANT_QUERY}, "top_k": 2},
        "fields": ["chunk_text", "title"],
    }
    assert hits[0].chunk_id == RELEVANT_ID
    assert len(hits) == 2
    assert hits[0].title == "Solar power"
    assert hits[0].source == "kb:pc"
    assert hits[0].score > hits[1].score


async def test_top_k_asks_for_more_candidates_but_returns_k(pinecone_server: FakePinecone) -> None:
    hits = await _kb(pinecone_server, top_k=5).search(RELEVANT_QUERY, k=1)

    assert pinecone_server.accepted[0].json()["query"]["top_k"] == 5  # type: ignore[index]
    assert len(hits) == 1


async def test_unauthorised_names_the_variable_and_never_the_key(
    pinecone_server: FakePinecone,
) -> None:
    kb = _kb(pinecone_server, env={"KAIROX_TEST_PINECONE_KEY": "wrong-secret-value"})

    with pytest.raises(RetrievalError) as caught:
        await kb.search("solar", k=3)

    message = str(caught.value)
    assert "authentication failed for kb:pc" in message
    assert "$KAIROX_TEST_PINECONE_KEY" in message
    assert "wrong-secret-value" not in message
    assert len(pinecone_server.requests) == 1


async def test_missing_variable_fails_before_any_request(pinecone_server: FakePinecone) -> None:
    with pytest.raises(RetrievalError, match="KAIROX_TEST_PINECONE_KEY is not set"):
        await _kb(pinecone_server, env={}).search("solar", k=3)
    assert pinecone_server.requests == []


async def test_429_is_retried_by_the_sdk(pinecone_server: FakePinecone) -> None:
    pinecone_server.fail_next(429, headers={"Retry-After": "0"})

    hits = await _kb(pinecone_server).search(RELEVANT_QUERY, k=1)

    assert hits[0].chunk_id == RELEVANT_ID
    assert len(pinecone_server.requests) == 2


async def test_persistent_429_gives_up_after_the_attempt_budget(
    pinecone_server: FakePinecone,
) -> None:
    pinecone_server.fail_next(429, times=10, headers={"Retry-After": "0"})

    with pytest.raises(RetrievalError, match=r"rate limited \(HTTP 429.*after retries"):
        await _kb(pinecone_server).search("solar", k=1)
    assert 1 < len(pinecone_server.requests) < 10


async def test_5xx_is_retried_then_succeeds(pinecone_server: FakePinecone) -> None:
    pinecone_server.fail_next(503)

    hits = await _kb(pinecone_server).search(RELEVANT_QUERY, k=1)

    assert hits and len(pinecone_server.requests) == 2


async def test_persistent_5xx_becomes_a_retrieval_error(pinecone_server: FakePinecone) -> None:
    pinecone_server.fail_next(500, times=10)

    with pytest.raises(RetrievalError, match=r"server error \(HTTP 500: fake pinecone 500\)"):
        await _kb(pinecone_server).search("solar", k=1)


async def test_other_4xx_fails_at_once_with_the_server_message(
    pinecone_server: FakePinecone,
) -> None:
    config, env = pinecone_setup(pinecone_server, namespace="missing")
    kb = create_knowledge_base("pc", config, env=env)

    with pytest.raises(RetrievalError, match="HTTP 404: fake pinecone 404"):
        await kb.search("solar", k=1)
    assert len(pinecone_server.requests) == 1


async def test_a_stalled_server_is_a_timeout(pinecone_server: FakePinecone) -> None:
    pinecone_server.stall_next(times=10)  # the SDK retries a timeout

    with pytest.raises(RetrievalError, match=r"timed out after 0\.2 s"):
        await _kb(pinecone_server, timeout_s=0.2).search("solar", k=1)


async def test_a_wrong_text_field_is_explained(pinecone_server: FakePinecone) -> None:
    with pytest.raises(RetrievalError, match="set text_field"):
        await _kb(pinecone_server, text_field="body").search("solar", k=2)


async def test_an_unreachable_host_is_a_retrieval_error() -> None:
    server = FakePinecone().start()
    config, env = pinecone_setup(server)
    server.stop()
    kb = create_knowledge_base("pc", config, env=env)

    with pytest.raises(RetrievalError, match=r"cannot reach 127\.0\.0\.1"):
        await kb.search("solar", k=1)
