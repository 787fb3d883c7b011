"""``kairox mcp --http``: the MCP streamable HTTP transport at ``/mcp``, for a team.

Every request passes, in order: a Host check (against DNS rebinding, as the web UI), an Origin
check (a browser page of another site), and a bearer token (``kairox tokens create``) that must be
bound to this server's workspace. The token's name and rights then hold for the request's task
(``kairox.mcp.access.CALLER``), so a read-only token cannot propose or change a memory. Every
request carries its token, so a token revoked in any process stops at once. The transport keeps
a session per client (``Mcp-Session-Id``), bound to the token that opened it until the client
ends it or the transport forgets it: its standalone stream is how a ``resources/subscribe``
client hears updates between its requests.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kairox.app import AppFacade
from kairox.core.ids import workspace_id_for
from kairox.core.net import LOOPBACK_NAMES, host_names, is_loopback, url_host
from kairox.mcp.access import CALLER, Caller

MCP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"


@dataclass(frozen=True)
class Gate:
    """The Host names this server answers to and the workspace its tokens must name."""

    port: int
    workspace: Path
    extra_hosts: tuple[str, ...] = ()

    @property
    def allowed_hosts(self) -> frozenset[str]:
        names = (*LOOPBACK_NAMES, *self.extra_hosts)
        return frozenset(f"{name.lower()}:{self.port}" for name in names)

    @property
    def allowed_origins(self) -> frozenset[str]:
        hosts = self.allowed_hosts
        return frozenset(f"{scheme}://{h}" for h in hosts for scheme in ("http", "https"))


class TokenMiddleware:
    """Host, Origin and bearer token, each refused in one line (400, 403, 401/403)."""

    def __init__(self, app: ASGIApp, *, facade: AppFacade, gate: Gate) -> None:
        self.app = app
        self.facade = facade
        self.gate = gate
        self.workspace_id = workspace_id_for(gate.workspace)
        self._session_owner: dict[str, str] = {}  # Mcp-Session-Id -> the token name that made it

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "").lower()
        if host not in self.gate.allowed_hosts:
            shown = host[:80] or "(none)"
            await _reply(
                send, 400, f"host '{shown}' is not allowed; use the URL the server printed"
            )
            return
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.gate.allowed_origins:
            await _reply(send, 403, "cross-origin request refused")
            return
        auth = headers.get("authorization", "")
        secret = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        info = await self.facade.tokens.authenticate(secret) if secret else None
        if info is None:
            await _reply(
                send,
                401,
                "missing, unknown or revoked bearer token; create one with "
                "`kairox tokens create NAME --workspace DIR`",
                extra=[(b"www-authenticate", b"Bearer")],
            )
            return
        if not info.allows(self.workspace_id):
            await _reply(
                send,
                403,
                f"the token '{info.name}' is not for the workspace {self.gate.workspace}; "
                "create a token with --workspace for it",
            )
            return
        session = headers.get(SESSION_HEADER)
        if session is not None and self._session_owner.get(session, info.name) != info.name:
            await _reply(send, 404, "unknown session; start a new one without Mcp-Session-Id")
            return

        async def send_noting_session(message: Message) -> None:
            if message["type"] == "http.response.start":
                made = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if made is not None:
                    self._session_owner.setdefault(made, info.name)
                if session is not None and _session_ended(scope["method"], message["status"]):
                    self._session_owner.pop(session, None)
            await send(message)

        token = CALLER.set(Caller(info.name, read_only=info.read_only))
        try:
            await self.app(scope, receive, send_noting_session)
        finally:
            CALLER.reset(token)


def _session_ended(method: str, status: int) -> bool:
    """Whether the transport's answer ends the session the request named: a DELETE it accepted
    (the client closed it), or a 404 (the transport no longer knows it). The owner table then
    forgets it, so it holds only live sessions however long the server runs."""
    return status == 404 or (method == "DELETE" and 200 <= status < 300)


async def _reply(
    send: Send, status: int, message: str, *, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = (message + "\n").encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def build_app(server: Any, facade: AppFacade, *, gate: Gate) -> ASGIApp:
    """The ASGI app: the SDK's streamable HTTP app (a session per client, for the updates of
    ``resources/subscribe``) behind the token middleware."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(gate.allowed_hosts),
        allowed_origins=sorted(gate.allowed_origins),
    )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=False, transport_security=security
    )
    return TokenMiddleware(app, facade=facade, gate=gate)


def server_url(host: str, port: int) -> str:
    return f"http://{url_host(host)}:{port}{MCP_PATH}"


def gate_for(sock: socket.socket, host: str, workspace: Path) -> Gate:
    port = int(sock.getsockname()[1])
    extra = () if is_loopback(host) else host_names(host)
    return Gate(port=port, workspace=workspace, extra_hosts=extra)


async def serve_http(app: ASGIApp, sock: socket.socket) -> None:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])
