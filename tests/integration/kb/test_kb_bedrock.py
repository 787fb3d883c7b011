"""The Bedrock client against a loopback fake of ``Retrieve`` that verifies SigV4 signatures."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from kbfakes import RELEVANT_ID, RELEVANT_QUERY, FakeBedrock
from kbfakes.wiring import RecordedSleeps, bedrock_setup, fast_retry

from kairox.core.errors import RetrievalError
from kairox.retrieval.knowledge_bases import KnowledgeBase, create_knowledge_base


class FixedClock:
    def now(self) -> datetime:
        return datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def _kb(
    server: FakeBedrock, sleeps: RecordedSleeps, env: dict[str, str] | None = None, **kw: object
) -> KnowledgeBase:
    config, default_env = bedrock_setup(server, **kw)
    return create_knowledge_base(
        "br", config, env=default_env if env is None else env, retry=fast_retry(sleeps)
    )


async def test_a_signed_retrieve_returns_text_score_and_location(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    hits = await _kb(bedrock_server, sleeps).search(RELEVANT_QUERY, k=2)

    assert bedrock_server.rejections == []
    request = bedrock_server.accepted[0]
    assert request.path == f"/knowledgebases/{bedrock_server.knowledge_base_id}/retrieve"
    assert request.json() == {
        "retrievalQuery": {"text": RELEVANT_QUERY},
        "retrievalConfiguration": {"vectorSearchConfiguration": {"numberOfResults": 2}},
    }
    assert request.headers["x-amz-security-token"] == "fake-session-token-123"
    assert "x-amz-security-token" in request.headers["authorization"]
    assert len(hits) == 2
    assert hits[0].path == f"s3://kb-docs/{RELEVANT_ID}.txt"
    assert hits[0].source == "kb:br"
    assert hits[0].score > hits[1].score


async def test_the_signature_uses_the_injected_clock(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    config, env = bedrock_setup(bedrock_server)
    kb = create_knowledge_base("br", config, env=env, retry=fast_retry(sleeps), clock=FixedClock())

    await kb.search("solar", k=1)

    request = bedrock_server.accepted[0]
    assert request.headers["x-amz-date"] == "20260301T093000Z"
    assert "/20260301/us-east-1/bedrock/aws4_request" in request.headers["authorization"]


async def test_search_type_is_sent_as_override(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    await _kb(bedrock_server, sleeps, search_type="HYBRID").search("solar", k=1)

    body = bedrock_server.accepted[0].json()
    assert body["retrievalConfiguration"]["vectorSearchConfiguration"] == {  # type: ignore[index]
        "numberOfResults": 1,
        "overrideSearchType": "HYBRID",
    }


async def test_a_wrong_secret_fails_signature_checks_and_names_the_variables(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    env = {
        "KAIROX_TEST_AWS_KEY_ID": bedrock_server.access_key_id,
        "KAIROX_TEST_AWS_SECRET": "definitely-wrong-secret",
        "KAIROX_TEST_AWS_TOKEN": "fake-session-token-123",
    }

    with pytest.raises(RetrievalError) as caught:
        await _kb(bedrock_server, sleeps, env=env).search("solar", k=1)

    message = str(caught.value)
    assert "authentication failed for kb:br" in message
    assert "$KAIROX_TEST_AWS_KEY_ID" in message and "$KAIROX_TEST_AWS_SECRET" in message
    assert "definitely-wrong-secret" not in message
    assert bedrock_server.accepted == []


async def test_a_missing_session_token_is_rejected_by_the_service(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    env = {
        "KAIROX_TEST_AWS_KEY_ID": bedrock_server.access_key_id,
        "KAIROX_TEST_AWS_SECRET": bedrock_server.secret_access_key,
    }

    with pytest.raises(RetrievalError, match="authentication failed"):
        await _kb(bedrock_server, sleeps, env=env).search("solar", k=1)
    assert "x-amz-security-token" not in bedrock_server.requests[0].headers


async def test_missing_credentials_name_the_variable(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    env = {"KAIROX_TEST_AWS_KEY_ID": bedrock_server.access_key_id}

    with pytest.raises(RetrievalError, match="KAIROX_TEST_AWS_SECRET is not set"):
        await _kb(bedrock_server, sleeps, env=env).search("solar", k=1)
    assert bedrock_server.requests == []


async def test_throttling_is_retried_and_each_attempt_is_signed(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    bedrock_server.fail_next(429)

    hits = await _kb(bedrock_server, sleeps).search(RELEVANT_QUERY, k=1)

    assert hits[0].path == f"s3://kb-docs/{RELEVANT_ID}.txt"
    assert len(bedrock_server.requests) == 2
    assert all("authorization" in r.headers for r in bedrock_server.requests)
    assert sleeps.delays == [0.001]


async def test_service_unavailable_twice_then_success(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    bedrock_server.fail_next(503, times=2)

    assert await _kb(bedrock_server, sleeps).search("solar", k=1)
    assert len(bedrock_server.requests) == 3


async def test_an_unknown_knowledge_base_is_reported(
    bedrock_server: FakeBedrock, sleeps: RecordedSleeps
) -> None:
    with pytest.raises(RetrievalError, match="HTTP 404: knowledge base not found"):
        await _kb(bedrock_server, sleeps, knowledge_base_id="OTHER12345").search("solar", k=1)
