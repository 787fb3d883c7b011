"""One request path for the HTTP knowledge bases: retries, backoff and error messages.

429 and 5xx are retried a bounded number of times (429 honours ``Retry-After``); 401/403 name
the environment variable to check; timeouts fail at once. No message ever contains a secret.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from kairox.core.errors import RetrievalError

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff: ``base_delay_s * 2**attempt``, capped at ``max_delay_s``."""

    max_attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    sleep: Sleep = field(default=asyncio.sleep, compare=False)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = self.base_delay_s * (2**attempt)
        wanted = retry_after if retry_after is not None else backoff
        return max(0.0, min(wanted, self.max_delay_s))


class _TlsContext:
    """One TLS context per knowledge base: building one costs ~50 ms, a client costs ~0."""

    def __init__(self) -> None:
        self._context: ssl.SSLContext | None = None

    async def get(self) -> ssl.SSLContext:
        if self._context is None:
            factory = getattr(httpx, "create_ssl_context", ssl.create_default_context)
            created: ssl.SSLContext = await asyncio.to_thread(factory)
            self._context = created
            return created
        return self._context


@dataclass(frozen=True, slots=True)
class HttpSettings:
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    client: httpx.AsyncClient | None = None
    """A shared client the caller owns; without one each request opens and closes its own."""
    tls: _TlsContext = field(default_factory=_TlsContext, compare=False, repr=False)


def require_env(env: Mapping[str, str], name: str, source: str, *, setting: str) -> str:
    """The value of a secret's environment variable, or a one-line error naming it."""
    value = env.get(name, "")
    if not value:
        kb_id = source.removeprefix("kb:")
        raise RetrievalError(
            source,
            f"environment variable {name} is not set; export it, or change {setting} in "
            f"[knowledge_bases.{kb_id}]",
        )
    return value


async def post_json(
    *,
    source: str,
    url: str,
    body: bytes,
    headers: Callable[[], Mapping[str, str]],
    settings: HttpSettings,
    timeout_s: float,
    auth_hint: str,
    secrets: Sequence[str] = (),
) -> object:
    """POST ``body`` and return the decoded JSON response, retrying what is worth retrying.

    ``headers`` is called once per attempt, so a signer can stamp a fresh date each time.
    ``auth_hint`` finishes the 401/403 message (e.g. ``check $PINECONE_API_KEY``).
    """
    policy = settings.retry
    last = ""
    for attempt in range(policy.max_attempts):
        try:
            response = await _send(settings, url, body, headers(), timeout_s)
        except httpx.TimeoutException:
            raise RetrievalError(source, f"timed out after {timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            reason = _scrub(f"cannot reach {httpx.URL(url).host}: {exc}", secrets)
            raise RetrievalError(source, reason) from None
        status = response.status_code
        if status in (401, 403):
            raise RetrievalError(source, f"authentication failed for {source}: {auth_hint}")
        if status == 429 or status >= 500:
            last = f"HTTP {status}" + _detail(response, secrets)
            if attempt + 1 < policy.max_attempts:
                retry_after = _retry_after(response) if status in (429, 503) else None
                await policy.sleep(policy.delay(attempt, retry_after))
                continue
            what = "rate limited" if status == 429 else "server error"
            raise RetrievalError(
                source, f"{what} ({last}) after {policy.max_attempts} attempts; try again later"
            )
        if status >= 400:
            raise RetrievalError(
                source, f"request rejected: HTTP {status}" + _detail(response, secrets)
            )
        try:
            return json.loads(response.content)
        except ValueError:
            raise RetrievalError(source, f"the response from {url} is not JSON") from None
    raise RetrievalError(source, f"no attempts were made ({last})")  # max_attempts < 1


async def _send(
    settings: HttpSettings,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    timeout_s: float,
) -> httpx.Response:
    if settings.client is not None:
        return await settings.client.post(
            url, content=body, headers=dict(headers), timeout=timeout_s
        )
    verify = await settings.tls.get()  # httpx builds one even for http:// unless given
    async with httpx.AsyncClient(timeout=timeout_s, verify=verify) as own:
        return await own.post(url, content=body, headers=dict(headers))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _detail(response: httpx.Response, secrets: Sequence[str]) -> str:
    """A short server message (``message`` / ``error`` fields, else the body's start)."""
    text = response.text.strip()
    try:
        payload = json.loads(text) if text else None
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        for key in ("message", "Message", "error", "errors"):
            value = payload.get(key)
            if isinstance(value, dict):
                value = value.get("message", value)
            if value:
                text = str(value)
                break
    text = " ".join(text.split())[:200]
    return f": {_scrub(text, secrets)}" if text else ""


def _scrub(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
