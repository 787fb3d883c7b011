"""The ``pinecone`` knowledge base: Pinecone's "search records" API with integrated embedding.

``POST {host}/records/namespaces/{namespace}/search`` with ``Api-Key`` and
``X-Pinecone-API-Version`` headers (docs.pinecone.io/reference/api/2025-04/data-plane/
search_records). Pinecone embeds the query text itself, so Kairox sends text, not vectors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from urllib.parse import quote

from kairox.core.errors import RetrievalError
from kairox.core.kb_config import PineconeConfig
from kairox.retrieval.knowledge_bases._http import HttpSettings, post_json, require_env
from kairox.retrieval.types import RetrievalHit


class PineconeKnowledgeBase:
    def __init__(
        self, kb_id: str, config: PineconeConfig, *, env: Mapping[str, str], http: HttpSettings
    ) -> None:
        self._id = kb_id
        self._config = config
        self._env = env
        self._http = http

    @property
    def name(self) -> str:
        return f"kb:{self._id}"

    @property
    def url(self) -> str:
        namespace = quote(self._config.namespace, safe="")
        return f"{self._config.host}/records/namespaces/{namespace}/search"

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        if not query.strip() or k <= 0:
            return []
        config = self._config
        key = require_env(self._env, config.api_key_env, self.name, setting="api_key_env")
        fields = [config.text_field] + ([config.title_field] if config.title_field else [])
        body = {
            "query": {"inputs": {"text": query}, "top_k": max(k, config.top_k or k)},
            "fields": fields,
        }
        headers = {
            "Api-Key": key,
            "X-Pinecone-API-Version": config.api_version,
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        payload = await post_json(
            source=self.name,
            url=self.url,
            body=json.dumps(body).encode("utf-8"),
            headers=lambda: headers,
            settings=self._http,
            timeout_s=config.timeout_s,
            auth_hint=f"check ${config.api_key_env}",
            secrets=(key,),
        )
        return self._hits(payload)[:k]

    def _hits(self, payload: object) -> list[RetrievalHit]:
        result = payload.get("result") if isinstance(payload, dict) else None
        hits = result.get("hits") if isinstance(result, dict) else None
        if not isinstance(hits, list):
            raise RetrievalError(self.name, "unexpected response: no result.hits list")
        out: list[RetrievalHit] = []
        for hit in hits:
            if not isinstance(hit, dict):
                continue
            fields = hit.get("fields")
            fields = fields if isinstance(fields, dict) else {}
            text = fields.get(self._config.text_field)
            if not isinstance(text, str) or not text.strip():
                continue
            title = fields.get(self._config.title_field) if self._config.title_field else None
            score = hit.get("_score")
            out.append(
                RetrievalHit(
                    source=self.name,
                    chunk_id=str(hit.get("_id", "")),
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
