"""A cap on request bodies, enforced before any of a body is buffered.

A declared ``Content-Length`` over the cap is refused (413) without reading a byte; a chunked
body is read only up to the cap, then refused. Bodies within the cap are replayed to the app
unchanged. The cap is ``kairox.core.records.MAX_REQUEST_BYTES``.
"""

from __future__ import annotations

import json

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kairox.core.records import MAX_REQUEST_BYTES


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, limit: int = MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"].upper() in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)  # no route reads a body on these
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None:
            if not declared.isdigit():
                await _reply(send, 400, "invalid Content-Length header")
                return
            if int(declared) > self.limit:
                await _reply(send, 413, self._too_large())
                return
            await self.app(scope, receive, send)  # the server reads at most what was declared
            return
        # No declared length (chunked): read up to the cap, then hand the body on.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                chunks = []
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await _reply(send, 413, self._too_large())
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"the request body is over {self.limit} bytes; send less"


async def _reply(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
