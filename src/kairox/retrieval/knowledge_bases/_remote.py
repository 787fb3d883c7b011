"""What the remote knowledge bases share: secrets from the environment, SDK failures as one line.

Each remote kind talks through its vendor's maintained SDK (``pinecone``, ``weaviate-client``,
``boto3``), which owns the transport, signing and retries. Kairox turns what the SDK raises into
one ``RetrievalError`` line: 401/403 name the environment variables to check, 429 and 5xx say to
try again later (the SDK has already retried), timeouts say so. No message contains a secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kairox.core.errors import RetrievalError


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


def missing_sdk(source: str, package: str, extra: str) -> RetrievalError:
    return RetrievalError(source, f"needs the {package} package: pip install 'kairox[{extra}]'")


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` on one line, at most 200 characters, with every secret masked."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return " ".join(text.split())[:200]


def http_failure(
    source: str, status: int, detail: str, *, auth_hint: str, secrets: Sequence[str] = ()
) -> RetrievalError:
    """The one-line error for an HTTP status the SDK gave up on."""
    shown = scrub(detail, secrets)
    said = f"HTTP {status}" + (f": {shown}" if shown else "")
    if status in (401, 403):
        return RetrievalError(source, f"authentication failed for {source}: {auth_hint}")
    if status == 429:
        return RetrievalError(source, f"rate limited ({said}) after retries; try again later")
    if status >= 500:
        return RetrievalError(source, f"server error ({said}) after retries; try again later")
    return RetrievalError(source, f"request rejected: {said}")


def timed_out(source: str, timeout_s: float) -> RetrievalError:
    return RetrievalError(source, f"timed out after {timeout_s:g} s")


def unreachable(
    source: str, where: str, detail: str, secrets: Sequence[str] = ()
) -> RetrievalError:
    return RetrievalError(source, scrub(f"cannot reach {where}: {detail}", secrets))
