"""The ``pinecone`` knowledge base: "search records" with integrated embedding, through the SDK.

``pinecone.AsyncIndex(host=...).search(namespace, top_k, inputs={"text": ...}, fields)``, which
posts to ``{host}/records/namespaces/{namespace}/search``; Pinecone embeds the query text itself,
so Kairox sends text, not vectors. The SDK retries throttling and server errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from kairox.core.errors import RetrievalError
from kairox.core.kb_config import PineconeConfig
from kairox.retrieval.knowledge_bases._remote import (
    http_failure,
    missing_sdk,
    require_env,
    scrub,
    timed_out,
    unreachable,
)
from kairox.retrieval.types import RetrievalHit


class PineconeKnowledgeBase:
    def __init__(self, kb_id: str, config: PineconeConfig, *, env: Mapping[str, str]) -> None:
        self._id = kb_id
        self._config = config
        self._env = env

    @property
    def name(self) -> str:
        return f"kb:{self._id}"

    @property
    def host(self) -> str:
        return str(self._config.host).rstrip("/")

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        if not query.strip() or k <= 0:
            return []
        config = self._config
        key = require_env(self._env, config.api_key_env, self.name, setting="api_key_env")
        try:
            from pinecone import AsyncIndex
            from pinecone.errors import (
                ApiError,
                PineconeConnectionError,
                PineconeError,
                PineconeTimeoutError,
            )
        except ImportError:
            raise missing_sdk(self.name, "pinecone", "pinecone") from None
        fields = [config.text_field] + ([config.title_field] if config.title_field else [])
        try:
            async with AsyncIndex(
                host=self.host,
                api_key=key,
                timeout=config.timeout_s,
                additional_headers={"X-Pinecone-API-Version": config.api_version},
            ) as index:
                response = await index.search(
                    namespace=config.namespace,
                    top_k=max(k, config.top_k or k),
                    inputs={"text": query},
                    fields=fields,
                )
        except ApiError as exc:
            raise http_failure(
                self.name,
                exc.status_code,
                _message(exc.body) or str(exc),
                auth_hint=f"check ${config.api_key_env}",
                secrets=(key,),
            ) from None
        except PineconeTimeoutError:
            raise timed_out(self.name, config.timeout_s) from None
        except PineconeConnectionError as exc:
            where = urlsplit(self.host).hostname or self.host
            raise unreachable(self.name, where, str(exc), (key,)) from None
        except PineconeError as exc:
            raise RetrievalError(self.name, scrub(str(exc), (key,))) from None
        return self.hits(response.result.hits)[:k]

    def hits(self, hits: list[Any]) -> list[RetrievalHit]:
        """The SDK's ``Hit`` objects (``id``, ``score``, ``fields``) as hits, best first."""
        out: list[RetrievalHit] = []
        for hit in hits:
            fields = hit.fields if isinstance(hit.fields, dict) else {}
            text = fields.get(self._config.text_field)
            if not isinstance(text, str) or not text.strip():
                continue
            title = fields.get(self._config.title_field) if self._config.title_field else None
            score = hit.score
            out.append(
                RetrievalHit(
                    source=self.name,
                    chunk_id=str(hit.id),
                    text=text,
                    score=float(score) if isinstance(score, int | float) else 0.0,
                    title=title if isinstance(title, str) else None,
                )
            )
        if hits and not out:
            raise RetrievalError(
                self.name,
                f"none of the {len(hits)} hits has a text field '{self._config.text_field}'; "
                "set text_field to the record field that holds the passage text",
            )
        return out


def _message(body: object) -> str:
    """Pinecone's error body ``{"error": {"code", "message"}}``: its message."""
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return str(message) if message else ""
