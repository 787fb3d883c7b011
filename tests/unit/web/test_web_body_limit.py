"""A request body over the cap is refused before it is buffered: a declared length is refused
without reading a byte, a chunked body is read only up to the cap (issue 21, Low)."""

from __future__ import annotations

from kairox.core.records import MAX_REQUEST_BYTES
from kairox.web import SecurityConfig
from kairox.web.app import create_app
from kairox.web.deps import WebContext

CHUNK = 1024 * 1024


async def _post(
    ctx: WebContext, security: SecurityConfig, *, declared: int | None
) -> tuple[int, int]:
    """POST an endless body to the memory import route; return the status and the bytes the
    app pulled from the client (the client gives up after 3x the cap)."""
    app = create_app(ctx)
    headers = [
        (b"host", b"127.0.0.1:8999"),
        (b"authorization", f"Bearer {security.token}".encode()),
        (b"content-type", b"application/json"),
    ]
    if declared is not None:
        headers.append((b"content-length", str(declared).encode()))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/api/memories/import", "raw_path": b"/api/memories/import",
        "query_string": b"", "headers": headers, "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8999), "root_path": "",
    }  # fmt: skip
    pulled = 0
    status: list[int] = []

    async def receive() -> dict[str, object]:
        nonlocal pulled
        if pulled > 3 * MAX_REQUEST_BYTES:
            raise AssertionError("the app kept reading an oversized body")
        pulled += CHUNK
        return {"type": "http.request", "body": b"x" * CHUNK, "more_body": True}

    async def send(message: dict[str, object]) -> None:
        if message["type"] == "http.response.start":
            status.append(int(message["status"]))  # type: ignore[call-overload]

    await app(scope, receive, send)
    return status[0], pulled


async def test_a_declared_oversized_body_is_refused_unread(
    ctx: WebContext, security: SecurityConfig
) -> None:
    assert await _post(ctx, security, declared=200 * 1024 * 1024) == (413, 0)


async def test_a_chunked_oversized_body_is_read_only_up_to_the_cap(
    ctx: WebContext, security: SecurityConfig
) -> None:
    status, pulled = await _post(ctx, security, declared=None)
    assert status == 413 and pulled <= MAX_REQUEST_BYTES + CHUNK
