"""The Bedrock knowledge base, through ``boto3`` (``endpoint_url`` points it at a loopback fake of
``Retrieve`` that verifies the SigV4 signatures boto3 makes). Retries are boto3's own."""

from __future__ import annotations

import pytest
from kbfakes import RELEVANT_ID, RELEVANT_QUERY, FakeBedrock
from kbfakes.wiring import bedrock_setup

from kairox.core.errors import RetrievalError
from kairox.retrieval.knowledge_bases import KnowledgeBase, create_knowledge_base


def _kb(server: FakeBedrock, env: dict[str, str] | None = None, **kw: object) -> KnowledgeBase:
    config, default_env = bedrock_setup(server, **kw)
    return create_knowledge_base("br", config, env=default_env if env is None else env)


async def test_a_signed_retrieve_returns_text_score_and_location(
    bedrock_server: FakeBedrock,
) -> None:
    hits = await _kb(bedrock_server).search(RELEVANT_QUERY, k=2)

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


async def test_search_type_is_sent_as_override(bedrock_server: FakeBedrock) -> None:
    await _kb(bedrock_server, search_type="HYBRID").search("solar", k=1)

    body = bedrock_server.accepted[0].json()
    assert body["retrievalConfiguration"]["vectorSearchConfiguration"] == {  # type: ignore[index]
        "numberOfResults": 1,
        "overrideSearchType": "HYBRID",
    }


async def test_a_wrong_secret_fails_signature_checks_and_names_the_variables(
    bedrock_server: FakeBedrock,
) -> None:
    env = {
        "KAIROX_TEST_AWS_KEY_ID": bedrock_server.access_key_id,
        "KAIROX_TEST_AWS_SECRET": "definitely-wrong-secret",
        "KAIROX_TEST_AWS_TOKEN": "fake-session-token-123",
    }

    with pytest.raises(RetrievalError) as caught:
        await _kb(bedrock_server, env=env).search("solar", k=1)

    message = str(caught.value)
    assert "authentication failed for kb:br" in message
    assert "$KAIROX_TEST_AWS_KEY_ID" in message and "$KAIROX_TEST_AWS_SECRET" in message
    assert "definitely-wrong-secret" not in message
    assert bedrock_server.accepted == []


async def test_a_missing_session_token_is_rejected_by_the_service(
    bedrock_server: FakeBedrock,
) -> None:
    env = {
        "KAIROX_TEST_AWS_KEY_ID": bedrock_server.access_key_id,
        "KAIROX_TEST_AWS_SECRET": bedrock_server.secret_access_key,
    }

    with pytest.raises(RetrievalError, match="authentication failed"):
        await _kb(bedrock_server, env=env).search("solar", k=1)
    assert "x-amz-security-token" not in bedrock_server.requests[0].headers


async def test_missing_credentials_name_the_variable(bedrock_server: FakeBedrock) -> None:
    env = {"KAIROX_TEST_AWS_KEY_ID": bedrock_server.access_key_id}

    with pytest.raises(RetrievalError, match="KAIROX_TEST_AWS_SECRET is not set"):
        await _kb(bedrock_server, env=env).search("solar", k=1)
    assert bedrock_server.requests == []


async def test_throttling_is_retried_and_each_attempt_is_signed(
    bedrock_server: FakeBedrock,
) -> None:
    bedrock_server.fail_next(429)

    hits = await _kb(bedrock_server).search(RELEVANT_QUERY, k=1)

    assert hits[0].path == f"s3://kb-docs/{RELEVANT_ID}.txt"
    assert len(bedrock_server.requests) == 2
    assert all("authorization" in r.headers for r in bedrock_server.requests)


async def test_service_unavailable_twice_then_success(bedrock_server: FakeBedrock) -> None:
    bedrock_server.fail_next(503, times=2)

    assert await _kb(bedrock_server).search("solar", k=1)
    assert len(bedrock_server.requests) == 3


async def test_an_unknown_knowledge_base_is_reported(bedrock_server: FakeBedrock) -> None:
    with pytest.raises(RetrievalError, match="HTTP 404: knowledge base not found"):
        await _kb(bedrock_server, knowledge_base_id="OTHER12345").search("solar", k=1)
