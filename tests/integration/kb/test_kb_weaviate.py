"""The Weaviate knowledge base on ``weaviate-client`` v4.

The client queries over gRPC, and a loopback fake of Weaviate's gRPC service is impractical, so
these tests replace the client (``kbfakes.weaviate``) and check what the knowledge base asks the
SDK for (``collection.query.hybrid``/``bm25``/``near_text`` with their arguments) and how it
maps the SDK's own ``QueryReturn``/``Object``/``MetadataReturn`` objects to hits. The real SDK
is exercised once, against a closed port.
"""

from __future__ import annotations

import socket

import pytest
from kbfakes import RELEVANT_QUERY
from kbfakes.weaviate import StandInWeaviate, weaviate_config
from weaviate.classes.query import MetadataQuery

from kairox.core.errors import RetrievalError
from kairox.retrieval.knowledge_bases import create_knowledge_base
from kairox.retrieval.knowledge_bases.weaviate import WeaviateKnowledgeBase

ENV = {"KAIROX_TEST_WEAVIATE_KEY": "wv-test-key"}


def _kb(**overrides: object) -> StandInWeaviate:
    return StandInWeaviate("wv", weaviate_config(**overrides), env=ENV)


@pytest.mark.parametrize(
    ("mode", "metadata"),
    [
        ("hybrid", MetadataQuery(score=True)),
        ("bm25", MetadataQuery(score=True)),
        ("near_text", MetadataQuery(distance=True)),
    ],
)
async def test_each_mode_calls_its_query_method(mode: str, metadata: MetadataQuery) -> None:
    kb = _kb(query=mode)

    hits = await kb.search(RELEVANT_QUERY, k=3)

    assert kb.keys == ["wv-test-key"] and kb.fake.used == ["Passage"]
    [(called, kwargs)] = kb.fake.query.calls
    assert called == mode
    assert kwargs == {
        "query": RELEVANT_QUERY,
        "limit": 3,
        "return_metadata": metadata,
        "return_properties": ["text", "title"],
    }
    assert hits[0].title == "Solar power" and hits[0].source == "kb:wv"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(0.0 <= h.score <= 1.0 for h in hits)


async def test_hybrid_alpha_reaches_the_call() -> None:
    kb = _kb(alpha=0.25)

    await kb.search("tides", k=2)

    [(_, kwargs)] = kb.fake.query.calls
    assert kwargs["alpha"] == 0.25 and kwargs["limit"] == 2


async def test_sdk_objects_map_to_hits() -> None:
    kb = _kb(query="near_text")
    answer = await kb.fake.query.near_text(
        query="moon gravity tides", limit=2, return_properties=["text", "title"]
    )
    kb.fake.query.calls.clear()

    hits = kb.hits(answer.objects)

    first = answer.objects[0]
    assert hits[0].chunk_id == str(first.uuid)
    assert hits[0].text == first.properties["text"] and "moon" in hits[0].text
    assert hits[0].score == pytest.approx(1.0 - first.metadata.distance)


async def test_a_wrong_text_property_is_explained() -> None:
    with pytest.raises(RetrievalError, match="set text_property"):
        await _kb(text_property="body").search("solar", k=2)


async def test_a_missing_key_fails_before_connecting() -> None:
    kb = StandInWeaviate("wv", weaviate_config(), env={})

    with pytest.raises(RetrievalError, match="KAIROX_TEST_WEAVIATE_KEY is not set"):
        await kb.search("solar", k=1)
    assert kb.keys == []


async def test_the_real_sdk_against_a_closed_port_is_one_retrieval_error() -> None:
    with socket.socket() as rest, socket.socket() as grpc:
        rest.bind(("127.0.0.1", 0))
        grpc.bind(("127.0.0.1", 0))
        ports = rest.getsockname()[1], grpc.getsockname()[1]
    config = weaviate_config(
        url=f"http://127.0.0.1:{ports[0]}", grpc_url=f"http://127.0.0.1:{ports[1]}", timeout_s=2.0
    )
    kb = create_knowledge_base("wv", config, env=ENV)
    assert isinstance(kb, WeaviateKnowledgeBase)

    with pytest.raises(RetrievalError) as caught:
        await kb.search("solar", k=1)

    message = str(caught.value)
    assert message.startswith("retrieval error (kb:wv): ") and "\n" not in message
    assert "wv-test-key" not in message


async def test_one_port_for_rest_and_grpc_is_refused_in_one_line() -> None:
    config = weaviate_config(url="http://127.0.0.1:8080", grpc_url="http://127.0.0.1:8080")

    with pytest.raises(RetrievalError, match="bad url or grpc_url") as caught:
        await create_knowledge_base("wv", config, env=ENV).search("solar", k=1)
    assert "\n" not in str(caught.value)
