"""Who may talk to the web server: a Host check, the access token, its cookie, and a CSRF check.

It is a pure ASGI middleware, so streamed responses pass through untouched. Checks run in order:
Host (400, against DNS rebinding), token (401), then CSRF for state-changing requests (403).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, quote, urlencode

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "x-csrf-token"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


@dataclass(frozen=True)
class SecurityConfig:
    """The secrets of one server run and the Host names it answers to."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    extra_hosts: tuple[str, ...] = ()

    @property
    def token_cookie(self) -> str:
        # Cookies ignore ports; the port in the name keeps two local servers apart.
        return f"kairox_token_{self.port}"

    @property
    def csrf_cookie(self) -> str:
        return f"kairox_csrf_{self.port}"

    @property
    def allowed_hosts(self) -> frozenset[str]:
        names = (*LOOPBACK_NAMES, *self.extra_hosts)
        return frozenset(f"{name.lower()}:{self.port}" for name in names)

    @property
    def allowed_origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.allowed_hosts)


def _same(given: str | None, expected: str) -> bool:
    return given is not None and secrets.compare_digest(given.encode(), expected.encode())


def _cookie_header(name: str, value: str, *, http_only: bool) -> str:
    flags = "; HttpOnly" if http_only else ""
    return f"{name}={value}; Path=/; SameSite=Strict{flags}"


class SecurityMiddleware:
    def __init__(self, app: ASGIApp, config: SecurityConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cfg = self.config
        headers = Headers(scope=scope)
        host = headers.get("host", "").lower()
        if host not in cfg.allowed_hosts:
            shown = host[:80] or "(none)"
            await _reply(
                send, 400, f"host '{shown}' is not allowed; use the URL kairox serve printed"
            )
            return

        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        query_token = next((v for k, v in query if k == "token"), None)
        auth = headers.get("authorization", "")
        bearer = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except CookieError:  # a malformed Cookie header counts as no cookie
            cookies = SimpleCookie()
        morsel = cookies.get(cfg.token_cookie)
        cookie_token = morsel.value if morsel is not None else None

        method = scope["method"].upper()
        path: str = scope["path"]
        by_header = _same(bearer, cfg.token)
        # ``?token=`` only counts on the page load that moves it into a cookie: a token in an
        # /api URL would end up in logs, history and Referer headers.
        page_load = method == "GET" and not path.startswith("/api/")
        by_query = page_load and _same(query_token, cfg.token)
        if not (by_header or by_query or _same(cookie_token, cfg.token)):
            await _reply(
                send, 401, "missing or wrong access token; open the URL that kairox serve printed"
            )
            return

        if method not in SAFE_METHODS:
            origin = headers.get("origin")
            if origin is not None and origin.lower() not in cfg.allowed_origins:
                await _reply(send, 403, "cross-origin request refused")
                return
            # A bearer header cannot be sent by a cross-site form; cookies and URLs can.
            if not by_header and not _same(headers.get(CSRF_HEADER), cfg.csrf):
                await _reply(send, 403, "missing or wrong X-CSRF-Token header; reload the page")
                return

        if by_query:
            # First visit: move the token into cookies, then drop it from the address bar.
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            await _redirect(send, path, rest, self._cookies())
            return

        csrf_morsel = cookies.get(cfg.csrf_cookie)
        needs_csrf_cookie = method == "GET" and not path.startswith("/api/")
        if needs_csrf_cookie and (csrf_morsel is None or csrf_morsel.value != cfg.csrf):
            extra = [_cookie_header(cfg.csrf_cookie, cfg.csrf, http_only=False)]
        else:
            extra = []

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                _security_headers(out)
                for value in extra:
                    out.append("set-cookie", value)
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _cookies(self) -> list[str]:
        cfg = self.config
        return [
            _cookie_header(cfg.token_cookie, cfg.token, http_only=True),
            _cookie_header(cfg.csrf_cookie, cfg.csrf, http_only=False),
        ]


def _security_headers(out: MutableHeaders) -> None:
    out["content-security-policy"] = CONTENT_SECURITY_POLICY
    out["x-content-type-options"] = "nosniff"
    out["referrer-policy"] = "no-referrer"
    out["x-frame-options"] = "DENY"
    out["cache-control"] = "no-store"


async def _reply(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await _start(send, status, headers)
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, path: str, query: str, cookies: Iterable[str]) -> None:
    # One leading slash and a quoted path: never a protocol-relative or absolute URL.
    target = quote("/" + path.lstrip("/"), safe="/-._~") + (f"?{query}" if query else "")
    headers = [(b"location", target.encode("ascii")), (b"content-length", b"0")]
    headers += [(b"set-cookie", c.encode("latin-1")) for c in cookies]
    await _start(send, 303, headers)
    await send({"type": "http.response.body", "body": b""})


async def _start(send: Send, status: int, headers: list[tuple[bytes, bytes]]) -> None:
    out = MutableHeaders(raw=headers)
    _security_headers(out)
    await send({"type": "http.response.start", "status": status, "headers": out.raw})


__all__ = ["CSRF_HEADER", "SecurityConfig", "SecurityMiddleware"]
