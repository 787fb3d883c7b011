"""The ``bedrock`` knowledge base: the Bedrock Agent Runtime ``Retrieve`` API through ``boto3``.

``bedrock-agent-runtime.retrieve(knowledgeBaseId, retrievalQuery.text,
retrievalConfiguration.vectorSearchConfiguration.numberOfResults)``; boto3 signs (SigV4) and
retries. Results come back as ``retrievalResults[].content.text``, ``.score`` and ``.location``
(docs.aws.amazon.com/bedrock/latest/APIReference/API_agent-runtime_Retrieve.html). Credentials
come from the configured environment variables only, never from a profile or instance role.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from kairox.core.errors import RetrievalError
from kairox.core.kb_config import BedrockConfig
from kairox.retrieval.knowledge_bases._remote import (
    http_failure,
    missing_sdk,
    require_env,
    scrub,
    timed_out,
    unreachable,
)
from kairox.retrieval.types import RetrievalHit

MAX_ATTEMPTS = 4
"""boto3's ``standard`` retry mode: throttling and 5xx, with jittered exponential backoff."""

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

Credentials = tuple[str, str, str | None]


class BedrockKnowledgeBase:
    def __init__(self, kb_id: str, config: BedrockConfig, *, env: Mapping[str, str]) -> None:
        self._id = kb_id
        self._config = config
        self._env = env
        self._clients: dict[Credentials, Any] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"kb:{self._id}"

    @property
    def endpoint(self) -> str:
        config = self._config
        if config.endpoint_url:
            return str(config.endpoint_url).rstrip("/")
        return f"https://bedrock-agent-runtime.{config.region}.amazonaws.com"

    def credentials(self) -> Credentials:
        config = self._config
        key_id = require_env(
            self._env, config.access_key_id_env, self.name, setting="access_key_id_env"
        )
        secret = require_env(
            self._env, config.secret_access_key_env, self.name, setting="secret_access_key_env"
        )
        return key_id, secret, self._env.get(config.session_token_env) or None

    def request(self, query: str, k: int) -> dict[str, Any]:
        """The keyword arguments of ``retrieve`` for one search."""
        vector: dict[str, object] = {"numberOfResults": k}
        if self._config.search_type:
            vector["overrideSearchType"] = self._config.search_type
        return {
            "knowledgeBaseId": self._config.knowledge_base_id,
            "retrievalQuery": {"text": query},
            "retrievalConfiguration": {"vectorSearchConfiguration": vector},
        }

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        if not query.strip() or k <= 0:
            return []
        credentials = self.credentials()
        response = await asyncio.to_thread(self._retrieve, credentials, self.request(query, k))
        return self.hits(response)[:k]

    def _client(self, credentials: Credentials) -> Any:
        try:
            import boto3
            from botocore.config import Config
        except ImportError:
            raise missing_sdk(self.name, "boto3", "bedrock") from None
        with self._lock:
            client = self._clients.get(credentials)
            if client is None:
                timeout = self._config.timeout_s
                client = boto3.session.Session().client(
                    "bedrock-agent-runtime",
                    region_name=self._config.region,
                    endpoint_url=self.endpoint,
                    aws_access_key_id=credentials[0],
                    aws_secret_access_key=credentials[1],
                    aws_session_token=credentials[2],
                    config=Config(
                        connect_timeout=timeout,
                        read_timeout=timeout,
                        retries={"mode": "standard", "max_attempts": MAX_ATTEMPTS},
                    ),
                )
                self._clients[credentials] = client
            return client

    def _retrieve(self, credentials: Credentials, request: dict[str, Any]) -> object:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            EndpointConnectionError,
            ReadTimeoutError,
        )

        config = self._config
        secrets = [s for s in (credentials[1], credentials[2]) if s]
        try:
            return self._client(credentials).retrieve(**request)
        except ClientError as exc:
            meta = exc.response.get("ResponseMetadata", {})
            error = exc.response.get("Error", {})
            raise http_failure(
                self.name,
                int(meta.get("HTTPStatusCode", 0)),
                str(error.get("Message") or error.get("Code") or ""),
                auth_hint=(
                    f"check ${config.access_key_id_env} and ${config.secret_access_key_env}"
                    f" (and ${config.session_token_env} for temporary credentials)"
                ),
                secrets=secrets,
            ) from None
        except (ConnectTimeoutError, ReadTimeoutError):
            raise timed_out(self.name, config.timeout_s) from None
        except EndpointConnectionError as exc:
            host = urlsplit(self.endpoint).hostname or self.endpoint
            raise unreachable(self.name, host, str(exc), secrets) from None
        except BotoCoreError as exc:
            raise RetrievalError(self.name, scrub(str(exc), secrets)) from None

    def hits(self, payload: object) -> list[RetrievalHit]:
        """``retrieve``'s response as hits (its ``retrievalResults``, best first)."""
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
