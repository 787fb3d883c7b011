"""The ``bedrock`` knowledge base: the Bedrock Agent Runtime ``Retrieve`` API, signed with SigV4.

``POST /knowledgebases/{knowledgeBaseId}/retrieve`` with ``retrievalQuery.text`` and
``retrievalConfiguration.vectorSearchConfiguration.numberOfResults``; results come back as
``retrievalResults[].content.text``, ``.score`` and ``.location``
(docs.aws.amazon.com/bedrock/latest/APIReference/API_agent-runtime_Retrieve.html).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from kairox.core.clock import Clock
from kairox.core.errors import RetrievalError
from kairox.core.kb_config import BedrockConfig
from kairox.retrieval.knowledge_bases._http import HttpSettings, post_json, require_env
from kairox.retrieval.knowledge_bases._sigv4 import AwsCredentials, sign
from kairox.retrieval.types import RetrievalHit

SIGNING_SERVICE = "bedrock"

# Where each location type keeps its address (RetrievalResultLocation in the API reference).
_LOCATION_KEYS: dict[str, tuple[str, str]] = {
    "S3": ("s3Location", "uri"),
    "WEB": ("webLocation", "url"),
    "CONFLUENCE": ("confluenceLocation", "url"),
    "SALESFORCE": ("salesforceLocation", "url"),
    "SHAREPOINT": ("sharePointLocation", "url"),
    "KENDRA": ("kendraDocumentLocation", "uri"),
    "CUSTOM": ("customDocumentLocation", "id"),
    "SQL": ("sqlLocation", "query"),
}


class BedrockKnowledgeBase:
    def __init__(
        self,
        kb_id: str,
        config: BedrockConfig,
        *,
        env: Mapping[str, str],
        http: HttpSettings,
        clock: Clock,
    ) -> None:
        self._id = kb_id
        self._config = config
        self._env = env
        self._http = http
        self._clock = clock

    @property
    def name(self) -> str:
        return f"kb:{self._id}"

    @property
    def url(self) -> str:
        config = self._config
        endpoint = config.endpoint_url or (
            f"https://bedrock-agent-runtime.{config.region}.amazonaws.com"
        )
        return f"{endpoint}/knowledgebases/{config.knowledge_base_id}/retrieve"

    def credentials(self) -> AwsCredentials:
        config = self._config
        key_id = require_env(
            self._env, config.access_key_id_env, self.name, setting="access_key_id_env"
        )
        secret = require_env(
            self._env, config.secret_access_key_env, self.name, setting="secret_access_key_env"
        )
        token = self._env.get(config.session_token_env) or None
        return AwsCredentials(key_id, secret, token)

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        if not query.strip() or k <= 0:
            return []
        config = self._config
        credentials = self.credentials()
        vector: dict[str, object] = {"numberOfResults": k}
        if config.search_type:
            vector["overrideSearchType"] = config.search_type
        body = json.dumps(
            {
                "retrievalQuery": {"text": query},
                "retrievalConfiguration": {"vectorSearchConfiguration": vector},
            }
        ).encode("utf-8")
        url = self.url

        def signed_headers() -> Mapping[str, str]:
            return sign(
                method="POST",
                url=url,
                headers={"content-type": "application/json", "accept": "application/json"},
                body=body,
                credentials=credentials,
                region=config.region,
                service=SIGNING_SERVICE,
                now=self._clock.now(),
            ).headers

        secrets = tuple(s for s in (credentials.secret_access_key, credentials.session_token) if s)
        payload = await post_json(
            source=self.name,
            url=url,
            body=body,
            headers=signed_headers,
            settings=self._http,
            timeout_s=config.timeout_s,
            auth_hint=(
                f"check ${config.access_key_id_env} and ${config.secret_access_key_env}"
                f" (and ${config.session_token_env} for temporary credentials)"
            ),
            secrets=secrets,
        )
        return self._hits(payload)[:k]

    def _hits(self, payload: object) -> list[RetrievalHit]:
        results = payload.get("retrievalResults") if isinstance(payload, dict) else None
        if not isinstance(results, list):
            raise RetrievalError(self.name, "unexpected response: no retrievalResults list")
        out: list[RetrievalHit] = []
        for rank, result in enumerate(results):
            if not isinstance(result, dict):
                continue
            content = result.get("content")
            text = content.get("text") if isinstance(content, dict) else None
            if not isinstance(text, str) or not text.strip():
                continue
            location = _location(result.get("location"))
            score = result.get("score")
            digest = hashlib.sha1(f"{location}\n{text}".encode()).hexdigest()[:16]
            out.append(
                RetrievalHit(
                    source=self.name,
                    chunk_id=f"{self._id}:{digest}",
                    text=text,
                    score=float(score) if isinstance(score, int | float) else 1.0 / (1 + rank),
                    path=location,
                )
            )
        return out


def _location(raw: object) -> str | None:
    if not isinstance(raw, dict):
        return None
    keys = _LOCATION_KEYS.get(str(raw.get("type", "")))
    if keys is None:
        return None
    inner = raw.get(keys[0])
    value = inner.get(keys[1]) if isinstance(inner, dict) else None
    return value if isinstance(value, str) else None
