"""The HTTP transport's session-to-token table (``TokenMiddleware``) holds only live sessions:
a session the client ends (DELETE) or the transport no longer knows (404) is forgotten, so a
server that runs for weeks does not grow one entry per client it ever saw, and a live session
stays bound to the token that opened it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from starlette.types import Message, Receive, Scope, Send

from kairox.core.ids import workspace_id_for
from kairox.mcp.http import SESSION_HEADER, Gate, TokenMiddleware
from kairox.store.tokens import TokenInfo, TokenWorkspace

PORT = 8765


class _Transport:
    """Stands in for the SDK's session manager: a request without a session opens one, DELETE
    ends one, and an unknown session is a 404."""

    def __init__(self) -> None:
        self.live: set[str] = set()
        self._ids = (f"s{n}" for n in itertools.count())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        session = headers.get(SESSION_HEADER.encode(), b"").decode() or None
        out: list[tuple[bytes, bytes]] = []
        if session is None:
            session = next(self._ids)
            self.live.add(session)
            out.append((SESSION_HEADER.encode(), session.encode()))
            status = 200
        elif session not in self.live:
            status = 404
        elif scope["method"] == "DELETE":
            self.live.discard(session)
            status = 200
        else:
            status = 200
        await send({"type": "http.response.start", "status": status, "headers": out})
        await send({"type": "http.response.body", "body": b""})


@dataclass
class _Tokens:
    workspace: Path

    async def authenticate(self, secret: str) -> TokenInfo | None:
        ws = TokenWorkspace(id=workspace_id_for(self.workspace), path=str(self.workspace))
        now = datetime.now(UTC)
        return TokenInfo(secret, (ws,), read_only=False, created_at=now, last_used_at=None)


@dataclass
class _Facade:
    tokens: _Tokens


async def _call(
    app: TokenMiddleware, token: str, method: str = "POST", session: str | None = None
) -> tuple[int, str | None]:
    headers = [
        (b"host", f"127.0.0.1:{PORT}".encode()),
        (b"authorization", f"Bearer {token}".encode()),
    ]
    if session is not None:
        headers.append((SESSION_HEADER.encode(), session.encode()))
    scope: Scope = {"type": "http", "method": method, "path": "/mcp", "headers": headers}
    answers: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        answers.append(message)

    await app(scope, receive, send)
    start = answers[0]
    made = dict(start.get("headers", [])).get(SESSION_HEADER.encode())
    return int(start["status"]), made.decode() if made else None


def _app(tmp_path: Path) -> tuple[TokenMiddleware, _Transport]:
    transport = _Transport()
    gate = Gate(port=PORT, workspace=tmp_path)
    facade = _Facade(_Tokens(tmp_path))
    return TokenMiddleware(transport, facade=facade, gate=gate), transport  # type: ignore[arg-type]


async def test_ended_sessions_are_forgotten(tmp_path: Path) -> None:
    app, transport = _app(tmp_path)
    for _ in range(50):
        status, session = await _call(app, "alice")
        assert status == 200 and session is not None
        assert (await _call(app, "alice", session=session))[0] == 200
        assert (await _call(app, "alice", "DELETE", session))[0] == 200
    assert transport.live == set()
    assert app._session_owner == {}


async def test_a_session_the_transport_forgot_is_forgotten(tmp_path: Path) -> None:
    app, transport = _app(tmp_path)
    _, session = await _call(app, "alice")
    assert session is not None
    transport.live.clear()  # e.g. the transport expired it
    assert (await _call(app, "alice", session=session))[0] == 404
    assert app._session_owner == {}


async def test_a_live_session_stays_bound_to_its_token(tmp_path: Path) -> None:
    app, _ = _app(tmp_path)
    _, session = await _call(app, "alice")
    assert session is not None
    assert (await _call(app, "mallory", session=session))[0] == 404
    assert (await _call(app, "mallory", "DELETE", session))[0] == 404
    assert (await _call(app, "alice", session=session))[0] == 200  # not ended by mallory
    assert app._session_owner == {session: "alice"}
