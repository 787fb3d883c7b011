"""The ``weaviate`` knowledge base: a collection queried through ``weaviate-client`` v4.

The client connects over REST and queries over gRPC (``collection.query.hybrid``, ``bm25`` or
``near_text``), the API Weaviate Cloud keeps after GraphQL is turned off (2027-05). Scores come
back in ``metadata``: ``score`` for bm25 and hybrid, ``distance`` for near_text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from kairox.core.errors import RetrievalError
from kairox.core.kb_config import WeaviateConfig
from kairox.retrieval.knowledge_bases._remote import (
    http_failure,
    missing_sdk,
    require_env,
    scrub,
    timed_out,
    unreachable,
)
from kairox.retrieval.relevance import saturated
from kairox.retrieval.types import RetrievalHit

BM25_HALF = 2.0
"""A remote BM25 score that counts as half evidence (about one rare query word present)."""
GRPC_PORT = 50051
CLOUD_SUFFIXES = (".weaviate.cloud", ".weaviate.network")


class WeaviateKnowledgeBase:
    def __init__(self, kb_id: str, config: WeaviateConfig, *, env: Mapping[str, str]) -> None:
        self._id = kb_id
        self._config = config
        self._env = env

    @property
    def name(self) -> str:
        return f"kb:{self._id}"

    def connect(self, key: str | None) -> Any:
        """An unconnected ``WeaviateAsyncClient`` for this knowledge base."""
        import weaviate
        from weaviate.classes.init import AdditionalConfig, Auth, Timeout

        config = self._config
        auth = Auth.api_key(key) if key else None
        timeout = Timeout(init=config.timeout_s, query=config.timeout_s, insert=config.timeout_s)
        extra = AdditionalConfig(timeout=timeout)
        url = urlsplit(str(config.url))
        host = url.hostname or ""
        if config.grpc_url is None and host.endswith(CLOUD_SUFFIXES) and auth is not None:
            return weaviate.use_async_with_weaviate_cloud(
                cluster_url=str(config.url), auth_credentials=auth, additional_config=extra
            )
        secure = url.scheme == "https"
        grpc = urlsplit(str(config.grpc_url)) if config.grpc_url else None
        return weaviate.use_async_with_custom(
            http_host=host,
            http_port=url.port or (443 if secure else 80),
            http_secure=secure,
            grpc_host=grpc.hostname or host if grpc else host,
            grpc_port=(grpc.port or (443 if grpc.scheme == "https" else 80)) if grpc else GRPC_PORT,
            grpc_secure=grpc.scheme == "https" if grpc else secure,
            auth_credentials=auth,
            additional_config=extra,
            skip_init_checks=True,
        )

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        if not query.strip() or k <= 0:
            return []
        config = self._config
        key = None
        hint = "this Weaviate needs an API key: set api_key_env"
        if config.api_key_env:
            key = require_env(self._env, config.api_key_env, self.name, setting="api_key_env")
            hint = f"check ${config.api_key_env}"
        secrets = (key,) if key else ()
        try:
            from weaviate.exceptions import (
                AuthenticationFailedError,
                UnexpectedStatusCodeError,
                WeaviateBaseError,
                WeaviateConnectionError,
                WeaviateTimeoutError,
            )
        except ImportError:
            raise missing_sdk(self.name, "weaviate-client", "weaviate") from None
        try:
            async with self.connect(key) as client:
                collection = client.collections.use(config.collection)
                found = await self.run_query(collection.query, query, k)
        except AuthenticationFailedError:
            raise http_failure(self.name, 401, "", auth_hint=hint) from None
        except UnexpectedStatusCodeError as exc:
            raise http_failure(
                self.name, exc.status_code, exc.message, auth_hint=hint, secrets=secrets
            ) from None
        except WeaviateTimeoutError:
            raise timed_out(self.name, config.timeout_s) from None
        except WeaviateConnectionError as exc:
            raise unreachable(self.name, str(config.url), str(exc), secrets) from None
        except WeaviateBaseError as exc:
            raise RetrievalError(self.name, scrub(str(exc), secrets)) from None
        except ValidationError as exc:  # the SDK's checks of url and grpc_url
            reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise RetrievalError(self.name, f"bad url or grpc_url: {reason}") from None
        return self.hits(found.objects)[:k]

    async def run_query(self, query_api: Any, query: str, k: int) -> Any:
        """One query through ``collection.query``, in the configured mode."""
        from weaviate.classes.query import MetadataQuery

        config = self._config
        properties = [config.text_property] + (
            [config.title_property] if config.title_property else []
        )
        if config.query == "near_text":
            return await query_api.near_text(
                query=query,
                limit=k,
                return_metadata=MetadataQuery(distance=True),
                return_properties=properties,
            )
        if config.query == "bm25":
            return await query_api.bm25(
                query=query,
                limit=k,
                return_metadata=MetadataQuery(score=True),
                return_properties=properties,
            )
        options: dict[str, Any] = {} if config.alpha is None else {"alpha": config.alpha}
        return await query_api.hybrid(
            query=query,
            limit=k,
            return_metadata=MetadataQuery(score=True),
            return_properties=properties,
            **options,
        )

    def hits(self, objects: Sequence[Any]) -> list[RetrievalHit]:
        """The SDK's ``Object`` results (``uuid``, ``properties``, ``metadata``) as hits."""
        config = self._config
        out: list[RetrievalHit] = []
        for rank, obj in enumerate(objects):
            props = obj.properties if isinstance(obj.properties, Mapping) else {}
            text = props.get(config.text_property)
            if not isinstance(text, str) or not text.strip():
                continue
            title = props.get(config.title_property) if config.title_property else None
            out.append(
                RetrievalHit(
                    source=self.name,
                    chunk_id=str(obj.uuid),
                    text=text,
                    score=self._score(obj.metadata, rank),
                    title=title if isinstance(title, str) else None,
                )
            )
        if objects and not out:
            raise RetrievalError(
                self.name,
                f"none of the {len(objects)} objects has text in '{config.text_property}'; "
                "set text_property to the property that holds the passage text",
            )
        return out

    def _score(self, metadata: Any, rank: int) -> float:
        if self._config.query == "near_text":
            distance = getattr(metadata, "distance", None)
            return 1.0 - float(distance) if distance is not None else 1.0 / (1 + rank)
        score = getattr(metadata, "score", None)
        if score is None:
            return 1.0 / (1 + rank)
        if self._config.query == "bm25":
            return saturated(float(score), BM25_HALF)  # unbounded: onto the shared [0, 1] scale
        return float(score)  # hybrid scores are already in [0, 1]
