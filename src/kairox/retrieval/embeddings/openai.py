"""The ``openai:<model>`` embedder: any OpenAI-compatible ``POST {base_url}/embeddings`` over httpx.

It works with OpenAI itself and with local servers (llama.cpp, vLLM, Ollama's compatible API). The
API key is read from an environment variable named in config, never stored. HTTP 429 and 5xx are
retried with bounded exponential backoff; every failure becomes a one-line ``RetrievalError``.
Servers that return one vector per token (llama-cpp-python's server on a model without a pooling
type, e.g. a causal LM) are mean-pooled here, which is what llama.cpp's MEAN pooling computes.
Such servers get one input per request: llama-cpp-python 0.3.x misplaces every per-token output
after the first sequence of a batch (``embed()`` advances its offset by tokens, not floats).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence

import httpx
import numpy as np

from kairox.core.errors import RetrievalError
from kairox.retrieval.embeddings.base import FloatMatrix, empty_matrix, l2_normalise

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
_RETRYABLE = {429, 500, 502, 503, 504}


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible HTTP endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._model = model
        self._base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._api_key_env = api_key_env
        self._dimensions = dimensions
        self._batch_size = max(1, batch_size)
        self._max_retries = max(0, max_retries)
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._sleep = sleep
        self._client = httpx.Client(timeout=timeout, transport=transport)
        self._lock = threading.Lock()
        self._one_per_request = False

    @property
    def model_id(self) -> str:
        return f"openai:{self._model}"

    @property
    def url(self) -> str:
        return f"{self._base_url}/embeddings"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self._dimensions = int(self._request(["dimension probe"]).shape[1])
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return empty_matrix(self.dimensions)
        parts: list[FloatMatrix] = []
        i = 0
        while i < len(texts):
            size = 1 if self._one_per_request else self._batch_size
            parts.append(self._request(list(texts[i : i + size])))
            i += size
        matrix = np.concatenate(parts, axis=0)
        if self._dimensions is None:
            self._dimensions = int(matrix.shape[1])
        elif matrix.shape[1] != self._dimensions:
            raise RetrievalError(
                self.model_id,
                f"{self.url} returned {matrix.shape[1]}-d vectors, expected {self._dimensions}",
            )
        return l2_normalise(matrix)

    def close(self) -> None:
        self._client.close()

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self._api_key_env, "")
        if not key and self._base_url == DEFAULT_BASE_URL:
            raise RetrievalError(
                self.model_id, f"no API key: set the {self._api_key_env} environment variable"
            )
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _request(self, batch: list[str]) -> FloatMatrix:
        body = {"model": self._model, "input": batch, "encoding_format": "float"}
        headers = self._headers()
        attempt = 0
        while True:
            try:
                with self._lock:
                    response = self._client.post(self.url, json=body, headers=headers)
            except httpx.HTTPError as exc:
                reason = f"cannot reach {self.url}: {type(exc).__name__}: {exc}"
                raise RetrievalError(self.model_id, reason.splitlines()[0]) from exc
            if response.status_code in _RETRYABLE and attempt < self._max_retries:
                self._sleep(self._delay(attempt, response))
                attempt += 1
                continue
            if response.status_code != 200:
                raise RetrievalError(self.model_id, self._describe_failure(response, attempt))
            matrix, per_token = self._parse(response, len(batch))
            if per_token and len(batch) > 1:
                self._one_per_request = True
                return np.concatenate([self._request([text]) for text in batch], axis=0)
            self._one_per_request = self._one_per_request or per_token
            return matrix

    def _delay(self, attempt: int, response: httpx.Response) -> float:
        retry_after = response.headers.get("retry-after", "")
        try:
            wanted = float(retry_after)
        except ValueError:
            wanted = self._backoff * (2**attempt)
        return max(0.0, min(wanted, self._max_backoff))

    def _describe_failure(self, response: httpx.Response, attempt: int) -> str:
        code = response.status_code
        if code in (401, 403):
            return f"{self.url} refused the credentials (HTTP {code}); check ${self._api_key_env}"
        tries = f" after {attempt + 1} attempts" if attempt else ""
        detail = _error_message(response)
        if code == 429:
            return f"{self.url} is rate limiting (HTTP 429){tries}; retry later: {detail}"
        return f"{self.url} failed with HTTP {code}{tries}: {detail}"

    def _parse(self, response: httpx.Response, expected: int) -> tuple[FloatMatrix, bool]:
        try:
            payload = response.json()
            items = sorted(payload["data"], key=lambda item: int(item.get("index", 0)))
            raw = [np.asarray(item["embedding"], dtype=np.float32) for item in items]
            per_token = any(r.ndim == 2 for r in raw)
            rows = [_pooled(r) for r in raw]
            matrix = np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            reason = f"{self.url} returned a malformed embeddings response ({type(exc).__name__})"
            raise RetrievalError(self.model_id, reason) from exc
        if matrix.ndim != 2 or matrix.shape[0] != expected or matrix.shape[1] == 0:
            raise RetrievalError(
                self.model_id,
                f"{self.url} returned embeddings of shape {matrix.shape} for {expected} inputs; "
                "the server must return one pooled vector per input",
            )
        if not np.all(np.isfinite(matrix)):
            raise RetrievalError(self.model_id, f"{self.url} returned non-finite values")
        return matrix, per_token


def _pooled(array: FloatMatrix) -> FloatMatrix:
    """One vector per input: a (tokens, d) per-token answer is mean-pooled over its tokens."""
    if array.ndim == 2 and array.shape[0] > 0:
        pooled: FloatMatrix = array.mean(axis=0)
        return pooled
    if array.ndim != 1:
        raise ValueError(f"embedding of shape {array.shape}")
    return array


def _error_message(response: httpx.Response) -> str:
    try:
        payload = response.json()
    except ValueError:
        return response.text.strip().splitlines()[0][:200] if response.text.strip() else "no body"
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"]).splitlines()[0][:200]
    if isinstance(error, str):
        return error.splitlines()[0][:200]
    return str(payload)[:200].replace("\n", " ")
