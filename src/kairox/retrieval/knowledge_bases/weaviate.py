"""The ``weaviate`` knowledge base: a collection queried through Weaviate's GraphQL ``Get``.

``POST {url}/v1/graphql`` with ``{"query": "{ Get { <Collection>(<operator>: {...}, limit: N)
{ <text> _additional { id score } } } }"}`` and ``Authorization: Bearer <key>``; the operator is
``hybrid``, ``bm25`` or ``nearText`` (docs.weaviate.io/weaviate/api/graphql/search-operators).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from kairox.core.errors import RetrievalError
from kairox.core.kb_config import WeaviateConfig
from kairox.retrieval.knowledge_bases._http import HttpSettings, post_json, require_env
from kairox.retrieval.relevance import saturated
from kairox.retrieval.types import RetrievalHit

BM25_HALF = 2.0
"""A remote BM25 score that counts as half evidence (about one rare query word present)."""


def graphql_string(text: str) -> str:
    """A GraphQL string literal: JSON's escapes are a subset GraphQL accepts."""
    return json.dumps(text, ensure_ascii=False)


class WeaviateKnowledgeBase:
    def __init__(
        self, kb_id: str, config: WeaviateConfig, *, env: Mapping[str, str], http: HttpSettings
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
        return f"{self._config.url}/v1/graphql"

    def graphql(self, query: str, k: int) -> str:
        """The ``Get`` query for one search; names are validated in config, text is escaped."""
        config = self._config
        literal = graphql_string(query)
        if config.query == "bm25":
            operator = f"bm25: {{query: {literal}}}"
            additional = "id score"
        elif config.query == "hybrid":
            alpha = "" if config.alpha is None else f", alpha: {config.alpha}"
            operator = f"hybrid: {{query: {literal}{alpha}}}"
            additional = "id score"
        else:
            operator = f"nearText: {{concepts: [{literal}]}}"
            additional = "id distance"
        fields = config.text_property
        if config.title_property:
            fields += f" {config.title_property}"
        return (
            f"{{ Get {{ {config.collection}({operator}, limit: {k}) "
            f"{{ {fields} _additional {{ {additional} }} }} }} }}"
        )

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        if not query.strip() or k <= 0:
            return []
        config = self._config
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        secrets: tuple[str, ...] = ()
        hint = "this Weaviate needs an API key: set api_key_env"
        if config.api_key_env:
            key = require_env(self._env, config.api_key_env, self.name, setting="api_key_env")
            headers["Authorization"] = f"Bearer {key}"
            secrets = (key,)
            hint = f"check ${config.api_key_env}"
        payload = await post_json(
            source=self.name,
            url=self.url,
            body=json.dumps({"query": self.graphql(query, k)}).encode("utf-8"),
            headers=lambda: headers,
            settings=self._http,
            timeout_s=config.timeout_s,
            auth_hint=hint,
            secrets=secrets,
        )
        return self._hits(payload)[:k]

    def _hits(self, payload: object) -> list[RetrievalHit]:
        if not isinstance(payload, dict):
            raise RetrievalError(self.name, "unexpected response: not a JSON object")
        errors = payload.get("errors")
        if isinstance(errors, list) and errors:
            first = errors[0]
            message = first.get("message") if isinstance(first, dict) else first
            raise RetrievalError(
                self.name, f"GraphQL error: {' '.join(str(message).split())[:200]}"
            )
        data = payload.get("data")
        get = data.get("Get") if isinstance(data, dict) else None
        rows = get.get(self._config.collection) if isinstance(get, dict) else None
        if not isinstance(rows, list):
            raise RetrievalError(
                self.name, f"unexpected response: no data.Get.{self._config.collection} list"
            )
        out: list[RetrievalHit] = []
        for rank, row in enumerate(rows):
            if not isinstance(row, dict):
                continue
            text = row.get(self._config.text_property)
            if not isinstance(text, str) or not text.strip():
                continue
            extra = row.get("_additional")
            extra = extra if isinstance(extra, dict) else {}
            title = row.get(self._config.title_property) if self._config.title_property else None
            out.append(
                RetrievalHit(
                    source=self.name,
                    chunk_id=str(extra.get("id") or f"{self._id}:{rank}"),
                    text=text,
                    score=self._score(extra, rank),
                    title=title if isinstance(title, str) else None,
                )
            )
        if rows and not out:
            raise RetrievalError(
                self.name,
                f"none of the {len(rows)} objects has text in '{self._config.text_property}'; "
                "set text_property to the property that holds the passage text",
            )
        return out

    def _score(self, extra: Mapping[str, object], rank: int) -> float:
        """Weaviate sends ``score`` as a string (bm25, hybrid) and ``distance`` for nearText."""
        raw = extra.get("distance") if self._config.query == "near_text" else extra.get("score")
        if not isinstance(raw, str | int | float):
            return 1.0 / (1 + rank)
        try:
            value = float(raw)
        except ValueError:
            return 1.0 / (1 + rank)
        if self._config.query == "near_text":
            return 1.0 - value  # cosine distance to similarity
        if self._config.query == "bm25":
            return saturated(value, BM25_HALF)  # unbounded: onto the shared [0, 1] scale
        return value  # hybrid scores are already in [0, 1]
