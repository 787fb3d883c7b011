"""An app over a real facade (temp home, scripted model), and httpx clients speaking to it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from kairox.app import AppFacade
from kairox.core.ids import workspace_id_for
from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope
from kairox.web import SecurityConfig, WebContext, create_app

PORT = 8999
BASE = f"http://127.0.0.1:{PORT}"

REPLIES = [
    {"text": 'Noted. <memory scope="user" key="editor.font">JetBrains Mono</memory> Done.'},
    {"text": "Second reply."},
    {"text": "Third reply."},
    {"text": "A summary of earlier talk.", "purpose": "summary"},
]


@pytest.fixture
async def facade(kairox_home: Path, script: Callable[..., str]) -> AsyncIterator[AppFacade]:
    f = AppFacade.open(kairox_home, model=script(*REPLIES))
    try:
        yield f
    finally:
        await f.aclose()
        f.close()


@pytest.fixture
def security() -> SecurityConfig:
    return SecurityConfig(port=PORT)


@pytest.fixture
def ctx(facade: AppFacade, workspace: Path, security: SecurityConfig) -> WebContext:
    return WebContext(
        facade=facade, workspace=workspace, security=security, heartbeat_s=0.2, poll_s=0.02
    )


@pytest.fixture
def transport(ctx: WebContext) -> httpx.ASGITransport:
    return httpx.ASGITransport(app=create_app(ctx))


@pytest.fixture
async def client(
    transport: httpx.ASGITransport, security: SecurityConfig
) -> AsyncIterator[httpx.AsyncClient]:
    """Authenticated as an API client: the token as a bearer header (no CSRF needed)."""
    headers = {"Authorization": f"Bearer {security.token}"}
    async with httpx.AsyncClient(transport=transport, base_url=BASE, headers=headers) as c:
        yield c


@pytest.fixture
async def anon(transport: httpx.ASGITransport) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as c:
        yield c


Propose = Callable[..., MemoryRecord]


@pytest.fixture
def propose(facade: AppFacade, workspace: Path) -> Propose:
    """Put a pending proposal in the store, as a turn would."""

    def make(
        body: str, *, key: str | None = "k", scope: MemoryScope = MemoryScope.USER
    ) -> MemoryRecord:
        return facade.services.memories.propose(
            scope, key, body, workspace_id=workspace_id_for(workspace), session_id=None, turn=1
        )

    return make


SseEvents = list[tuple[str, dict[str, object]]]


def _sse_events(text: str) -> SseEvents:
    """Parse an SSE body into (event, data) pairs; comments are skipped."""
    out: list[tuple[str, dict[str, object]]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if data:
            out.append((name, json.loads("\n".join(data))))
    return out


@pytest.fixture
def parse_sse() -> Callable[[str], SseEvents]:
    return _sse_events


ClientFor = Callable[[list[dict[str, object]]], Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def client_for(
    kairox_home: Path, workspace: Path, script: Callable[..., str], security: SecurityConfig
) -> AsyncIterator[ClientFor]:
    """A bearer client over a facade that replays ``lines`` (for scripts a test needs alone)."""
    async with contextlib.AsyncExitStack() as stack:

        async def make(lines: list[dict[str, object]]) -> httpx.AsyncClient:
            f = AppFacade.open(kairox_home, model=script(*lines))
            stack.callback(f.close)
            stack.push_async_callback(f.aclose)
            ctx = WebContext(facade=f, workspace=workspace, security=security, poll_s=0.02)
            c = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=create_app(ctx)),
                base_url=BASE,
                headers={"Authorization": f"Bearer {security.token}"},
            )
            await stack.enter_async_context(c)
            return c

        yield make
