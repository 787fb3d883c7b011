"""The Weaviate client against a loopback fake of the GraphQL ``Get`` API."""

from __future__ import annotations

import pytest
from kbfakes import RELEVANT_QUERY, FakeWeaviate
from kbfakes.wiring import RecordedSleeps, fast_retry, weaviate_setup

from kairox.core.errors import RetrievalError
from kairox.retrieval.knowledge_bases import KnowledgeBase, create_knowledge_base


def _kb(
    server: FakeWeaviate, sleeps: RecordedSleeps, env: dict[str, str] | None = None, **kw: object
) -> KnowledgeBase:
    config, default_env = weaviate_setup(server, **kw)
    return create_knowledge_base(
        "wv", config, env=default_env if env is None else env, retry=fast_retry(sleeps)
    )


@pytest.mark.parametrize(
    ("mode", "operator"), [("hybrid", "hybrid"), ("bm25", "bm25"), ("near_text", "nearText")]
)
async def test_each_query_mode_sends_its_operator(
    weaviate_server: FakeWeaviate, sleeps: RecordedSleeps, mode: str, operator: str
) -> None:
    hits = await _kb(weaviate_server, sleeps, query=mode).search(RELEVANT_QUERY, k=3)

    assert weaviate_server.rejections == []
    assert weaviate_server.queries == [(operator, RELEVANT_QUERY, None)]
    request = weaviate_server.accepted[0]
    assert request.headers["authorization"] == f"Bearer {weaviate_server.api_key}"
    assert hits[0].title == "Solar power"
    assert hits[0].source == "kb:wv"
    assert all(isinstance(hit.score, float) for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert len(hits) <= 3


async def test_hybrid_alpha_and_limit_reach_the_query(
    weaviate_server: FakeWeaviate, sleeps: RecordedSleeps
) -> None:
    await _kb(weaviate_server, sleeps, alpha=0.25).search("tides", k=2)

    query = weaviate_server.accepted[0].json()["query"]  # type: ignore[index]
    assert "alpha: 0.25" in query and "limit: 2" in query
    assert weaviate_server.queries == [("hybrid", "tides", 0.25)]


async def test_scores_sent_as_strings_become_floats(
    weaviate_server: FakeWeaviate, sleeps: RecordedSleeps
) -> None:
    hits = await _kb(weaviate_server, sleeps, query="bm25").search("moon gravity tides", k=5)

    assert hits[0].chunk_id  # the object's uuid
    assert hits[0].score > 0.0
    assert "moon" in hits[0].text


async def test_quotes_backslashes_and_braces_are_escaped(
    weaviate_server: FakeWeaviate, sleeps: RecordedSleeps
) -> None:
    nasty = 'solar "panels" \\ } { ) limit: 1 \n\t ünïcode'

    await _kb(weaviate_server, sleeps).search(nasty, k=2)

    assert weaviate_server.rejections == []
    assert weaviate_server.queries[0][1] == nasty


async def test_graphql_errors_in_a_200_are_retrieval_errors(
    weaviate_server: FakeWeaviate, sleeps: RecordedSleeps
) -> None:
    with pytest.raises(RetrievalError, match='GraphQL error: Cannot query field "Missing"'):
        await _kb(weaviate_server, sleeps, collection="Missing").search("solar", k=2)


async def test_unauthorised_names_the_variable(
    weaviate_server: FakeWeaviate, sleeps: RecordedSleeps
) -> None:
    kb = _kb(weaviate_server, sleeps, env={"KAIROX_TEST_WEAVIATE_KEY": "not-the-key"})

    with pytest.raises(RetrievalError) as caught:
        await kb.search("solar", k=2)
    assert "check $KAIROX_TEST_WEAVIATE_KEY" in str(caught.value)
    assert "not-the-key" not in str(caught.value)


async def test_a_server_without_auth_needs_no_key(sleeps: RecordedSleeps) -> None:
    server = FakeWeaviate(api_key=None).start()
    try:
        config, env = weaviate_setup(server)
        kb = create_knowledge_base("open", config, env=env, retry=fast_retry(sleeps))
        hits = await kb.search(RELEVANT_QUERY, k=1)
        assert "authorization" not in server.accepted[0].headers
        assert hits[0].title == "Solar power"
    finally:
        server.stop()


async def test_429_then_success(weaviate_server: FakeWeaviate, sleeps: RecordedSleeps) -> None:
    weaviate_server.fail_next(429, headers={"Retry-After": "1"})

    hits = await _kb(weaviate_server, sleeps).search(RELEVANT_QUERY, k=1)

    assert hits and sleeps.delays == [1.0]


async def test_5xx_exhausts_the_retries(
    weaviate_server: FakeWeaviate, sleeps: RecordedSleeps
) -> None:
    weaviate_server.fail_next(502, times=3)

    with pytest.raises(RetrievalError, match=r"server error \(HTTP 502"):
        await _kb(weaviate_server, sleeps).search("solar", k=1)
    assert len(weaviate_server.requests) == 3
