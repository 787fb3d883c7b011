"""Chat routes: sessions of the server's workspace, streamed turns, compaction, profile, cancel.

A turn streams as server-sent events, one per event of the session (from the store's ordered
stream), then a final ``done`` event that carries the outcome. A client that asks for JSON only
(``Accept: application/json``, as the chat page does: it follows ``/api/events/stream``) gets the
outcome alone. Errors before the first event are ordinary JSON errors with a 4xx status.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

from fastapi import APIRouter, Header, status
from fastapi.responses import JSONResponse, Response, StreamingResponse

from kairox.core.errors import KairoxError
from kairox.core.types import SessionState
from kairox.web.deps import Ctx, log
from kairox.web.models import (
    CancelOut,
    CompactOut,
    ErrorOut,
    InfoOut,
    MessageIn,
    ProfileOut,
    ProfilesOut,
    ProfileSwitchIn,
    SessionCreate,
    SessionOut,
    StateOut,
    TurnOutcomeOut,
)
from kairox.web.sse import (
    EVENT_STREAM,
    SSE_CONTENT,
    SSE_RESPONSES,
    event_frame,
    event_stream,
    frame,
)

router = APIRouter(prefix="/api", tags=["chat"])


def _version() -> str:
    try:
        return version("kairox")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


@router.get("/info")
async def info(ctx: Ctx) -> InfoOut:
    """The workspace this server was started for."""
    return InfoOut(workspace=str(ctx.workspace), workspace_id=ctx.workspace_id, version=_version())


@router.get("/profiles")
async def profiles(ctx: Ctx) -> ProfilesOut:
    """The model profiles the workspace's configuration defines."""
    config = (await asyncio.to_thread(ctx.facade.config, ctx.workspace)).config
    return ProfilesOut(
        default=config.default_profile,
        profiles=[ProfileOut(alias=a, model=p.model) for a, p in sorted(config.profiles.items())],
    )


@router.get("/sessions")
async def list_sessions(ctx: Ctx, all: bool = False) -> list[SessionOut]:
    """Sessions of the server's workspace, oldest first; archived ones only with ``all``."""
    found = await ctx.facade.sessions.list(workspace=ctx.workspace, include_archived=all)
    return [SessionOut.of(s) for s in found]


@router.post("/sessions", status_code=status.HTTP_201_CREATED)
async def open_session(ctx: Ctx, body: SessionCreate) -> SessionOut:
    """Start a session in the server's workspace, or resume it if it exists."""
    return SessionOut.of(
        await ctx.facade.chat.open(body.name, workspace=ctx.workspace, profile=body.profile)
    )


@router.get("/sessions/{name}")
async def get_session(ctx: Ctx, name: str) -> SessionOut:
    """The session ``name`` of the server's workspace."""
    return await ctx.session(name)


@router.get("/sessions/{name}/state")
async def session_state(ctx: Ctx, name: str) -> StateOut:
    """What the session's actor is doing, and how many commands wait behind it."""
    sid = (await ctx.session(name)).id
    return StateOut(state=ctx.facade.chat.state(sid), queued=ctx.facade.chat.queued(sid))


@router.post(
    "/sessions/{name}/messages",
    response_class=StreamingResponse,
    responses={
        200: {
            **SSE_RESPONSES[200],
            "content": {
                **SSE_CONTENT,
                "application/json": {"schema": {"$ref": "#/components/schemas/TurnOutcomeOut"}},
            },
        },
        404: {"model": ErrorOut},
        409: {"model": ErrorOut},
    },
)
async def send_message(
    ctx: Ctx,
    name: str,
    body: MessageIn,
    accept: Annotated[str | None, Header(max_length=1000)] = None,
) -> Response:
    """Run one turn; stream its events as SSE, ending with a ``done`` event (the outcome).

    With ``Accept: application/json`` (and not ``text/event-stream``), answer the outcome only.
    """
    from kairox.app import TurnDone

    sid = (await ctx.session(name)).id
    wanted = accept or ""
    if "application/json" in wanted and EVENT_STREAM not in wanted:
        outcome = TurnOutcomeOut.of(await ctx.facade.chat.run(sid, body.text))
        return JSONResponse(outcome.model_dump(mode="json"))
    updates = ctx.facade.chat.send(sid, body.text)
    first = await anext(updates)  # errors before the first event become HTTP errors

    async def stream() -> AsyncIterator[bytes]:
        update = first
        try:
            while True:
                if isinstance(update, TurnDone):
                    yield frame("done", TurnOutcomeOut.of(update.outcome))
                    return
                yield event_frame(update)
                update = await anext(updates)
        except KairoxError as exc:
            yield frame("error", ErrorOut(error=str(exc)))
        except Exception:
            log.exception("a streamed turn failed")
            yield frame("error", ErrorOut(error="internal error; see the server log"))
        finally:
            aclose = getattr(updates, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()

    return event_stream(stream())


@router.post("/sessions/{name}/compact")
async def compact(ctx: Ctx, name: str) -> CompactOut:
    """Compact now. Behind a running turn it is queued: the reply says so and returns at once."""
    sid = (await ctx.session(name)).id
    state = ctx.facade.chat.state(sid)
    idle = state is SessionState.IDLE and ctx.facade.chat.queued(sid) == 0
    future = ctx.facade.chat.compact_later(sid)
    if not idle:
        ctx.keep(future)
        return CompactOut(status="queued", state=state)
    return CompactOut.ran(await asyncio.shield(future), state=state)


@router.post("/sessions/{name}/profile")
async def switch_profile(ctx: Ctx, name: str, body: ProfileSwitchIn) -> SessionOut:
    """Switch the session's model profile (after a running turn, if any)."""
    sid = (await ctx.session(name)).id
    return SessionOut.of(await ctx.facade.chat.switch_profile(sid, body.alias))


@router.post("/sessions/{name}/archive")
async def archive_session(ctx: Ctx, name: str) -> SessionOut:
    """Archive the session: its session memories are discarded and new turns are refused. It
    runs after a running turn (through the session's queue and lease, like compaction); while
    another process runs the session it is refused with 409 "session busy"."""
    sid = (await ctx.session(name)).id
    return SessionOut.of(await ctx.facade.sessions.archive(sid))


@router.post("/sessions/{name}/unarchive")
async def unarchive_session(ctx: Ctx, name: str) -> SessionOut:
    """Make an archived session usable again."""
    sid = (await ctx.session(name)).id
    return SessionOut.of(await ctx.facade.sessions.unarchive(sid))


@router.post("/sessions/{name}/cancel")
async def cancel(ctx: Ctx, name: str) -> CancelOut:
    """Cancel the running turn, if there is one."""
    sid = (await ctx.session(name)).id
    return CancelOut(cancelled=await ctx.facade.chat.cancel(sid))
