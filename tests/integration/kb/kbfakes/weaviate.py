"""A stand-in for ``weaviate-client``'s async client, answering with the SDK's own result types.

The v4 client queries over gRPC; a loopback fake of Weaviate's gRPC service is impractical (a
protobuf server of the whole ``weaviate.v1`` API), so the transport is replaced here: the
knowledge base gets this client from its ``connect`` hook, and every query answers with real
``weaviate`` ``QueryReturn`` / ``Object`` / ``MetadataReturn`` objects built from the shared
corpus. What the tests cover is the call each mode makes and the mapping from the SDK's response
objects to hits; the connection itself is checked against a closed port.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from weaviate.collections.classes.internal import MetadataReturn, Object, QueryReturn

from kairox.core.kb_config import WeaviateConfig
from kairox.retrieval.knowledge_bases.weaviate import WeaviateKnowledgeBase
from kbfakes.corpus import DOCUMENTS, Doc, rank


@dataclass
class FakeQueryApi:
    """``collection.query``: ``hybrid``, ``bm25`` and ``near_text``, each recorded."""

    docs: tuple[Doc, ...]
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def hybrid(self, **kwargs: Any) -> QueryReturn[Any, Any]:
        return self._answer("hybrid", kwargs, lambda s: MetadataReturn(score=min(1.0, s)))

    async def bm25(self, **kwargs: Any) -> QueryReturn[Any, Any]:
        return self._answer("bm25", kwargs, lambda s: MetadataReturn(score=s * 4))

    async def near_text(self, **kwargs: Any) -> QueryReturn[Any, Any]:
        return self._answer("near_text", kwargs, lambda s: MetadataReturn(distance=1 - min(1, s)))

    def _answer(self, mode: str, kwargs: dict[str, Any], meta: Any) -> QueryReturn[Any, Any]:
        self.calls.append((mode, kwargs))
        wanted = kwargs["return_properties"]
        objects = []
        for doc, score in rank(kwargs["query"], self.docs)[: kwargs["limit"]]:
            record = {"text": doc.text, "title": doc.title}
            objects.append(
                Object(
                    uuid=uuid.uuid5(uuid.NAMESPACE_URL, doc.id),
                    metadata=meta(score),
                    properties={name: record[name] for name in wanted if name in record},
                    references=None,
                    vector={},
                    collection="Passage",
                )
            )
        return QueryReturn(objects=objects)


@dataclass
class FakeWeaviateClient:
    """Enough of ``WeaviateAsyncClient``: ``async with``, then ``collections.use(name).query``."""

    query: FakeQueryApi
    used: list[str] = field(default_factory=list)

    @property
    def collections(self) -> FakeWeaviateClient:
        return self

    def use(self, name: str) -> FakeWeaviateClient:
        self.used.append(name)
        return self

    async def __aenter__(self) -> FakeWeaviateClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


class StandInWeaviate(WeaviateKnowledgeBase):
    """The real knowledge base with the SDK client replaced by ``FakeWeaviateClient``."""

    def __init__(self, kb_id: str, config: WeaviateConfig, *, env: dict[str, str]) -> None:
        super().__init__(kb_id, config, env=env)
        self.fake = FakeWeaviateClient(FakeQueryApi(DOCUMENTS))
        self.keys: list[str | None] = []

    def connect(self, key: str | None) -> Any:
        self.keys.append(key)
        return self.fake


def weaviate_config(**overrides: object) -> WeaviateConfig:
    return WeaviateConfig.model_validate(
        {
            "kind": "weaviate",
            "url": "http://127.0.0.1:1",
            "collection": "Passage",
            "api_key_env": "KAIROX_TEST_WEAVIATE_KEY",
            "title_property": "title",
            "timeout_s": 5.0,
            **overrides,
        }
    )
