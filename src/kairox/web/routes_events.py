"""Event routes: read the log, and follow it live (from this and every other process) over SSE.

The stream is the store's one ordered stream: each committed event once, in seq order, whichever
process wrote it. The chat page renders its transcript from it (history up to the seq it follows
from comes from the list route with ``until``), and the memory and context pages refresh on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from kairox.core.events import StoredEvent
from kairox.web.deps import Ctx
from kairox.web.models import ErrorOut, LastSeqOut
from kairox.web.sse import HEARTBEAT, SSE_RESPONSES, event_frame, event_stream, with_heartbeats

router = APIRouter(prefix="/api/events", tags=["events"])

SessionName = Annotated[str | None, Query(max_length=200)]
MAX_SEQ = 2**63 - 1  # SQLite INTEGER
After = Annotated[int, Query(ge=0, le=MAX_SEQ)]
Limit = Annotated[int | None, Query(ge=1, le=10_000)]


@router.get("")
async def list_events(
    ctx: Ctx,
    session: SessionName = None,
    after: After = 0,
    until: Annotated[int | None, Query(ge=0, le=MAX_SEQ)] = None,
    limit: Limit = None,
) -> list[StoredEvent]:
    """Events of the server's workspace (and the home-wide ones, such as a decision on a user
    memory) with ``after < seq <= until``, oldest first; of one session when ``session`` is
    given. A page that follows ``/stream`` from seq N reads its
    history with ``until=N``."""
    session_id = (await ctx.session(session)).id if session else None
    return await ctx.facade.events.list(
        session=session_id,
        workspace=ctx.workspace,
        after=after,
        until=until,
        limit=limit,
        in_workspace=True,
        home_wide=True,  # user-memory decisions: user memories stay visible here
    )


@router.get("/last")
async def last_seq(ctx: Ctx) -> LastSeqOut:
    return LastSeqOut(last_seq=await ctx.facade.events.last_seq())


@router.get(
    "/stream",
    response_class=StreamingResponse,
    responses={**SSE_RESPONSES, 404: {"model": ErrorOut}},
)
async def follow_events(
    ctx: Ctx,
    session: SessionName = None,
    after: Annotated[int | None, Query(ge=0, le=MAX_SEQ)] = None,
    limit: Limit = None,
    last_event_id: Annotated[int | None, Header(ge=0, le=MAX_SEQ)] = None,
) -> StreamingResponse:
    """New events of the server's workspace as they are appended by any process; ``limit`` ends
    the stream after N events.

    Starts after ``after`` (default: now). A reconnecting EventSource resumes from its
    ``Last-Event-ID``.
    """
    session_id = (await ctx.session(session)).id if session else None
    start = last_event_id if last_event_id is not None else after
    if start is None:
        start = await ctx.facade.events.last_seq()
    source = ctx.facade.events.subscribe(
        session=session_id,
        workspace=ctx.workspace,
        after=start,
        poll_s=ctx.poll_s,
        in_workspace=True,
        home_wide=True,  # user-memory decisions: user memories stay visible here
    )

    async def stream() -> AsyncIterator[bytes]:
        sent = 0
        yield HEARTBEAT  # sends the headers now, so the client knows it is subscribed
        async for event in with_heartbeats(source, ctx.heartbeat_s):
            if event is None:
                yield HEARTBEAT
                continue
            yield event_frame(event)
            sent += 1
            if limit is not None and sent >= limit:
                return

    return event_stream(stream())
