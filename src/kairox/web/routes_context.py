"""Context inspector routes: a session's turns, a turn's assembly trace and replay, one item
expanded to its text, summaries, and a search of the session's history (the recall search a turn
runs).

The trace is the ``ContextAssembled`` payload as recorded: the budget by source and every item
that was considered, included or left out, with its tokens and the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Query

from kairox.core.errors import NotFound
from kairox.core.events import ContextAssembled
from kairox.core.messages import ChatMessage
from kairox.web.deps import Ctx
from kairox.web.models import ItemTextOut, RecallHitOut, RecallOut, SummaryOut

Turn = Annotated[int, Query(ge=0, le=2**31)]
Ref = Annotated[str, Query(min_length=1, max_length=500)]
RecallQuery = Annotated[str, Query(min_length=1, max_length=2000)]
RecallK = Annotated[int, Query(ge=1, le=100)]

router = APIRouter(prefix="/api/sessions/{name}/context", tags=["context"])


@router.get("/turns")
async def context_turns(ctx: Ctx, name: str) -> list[int]:
    """The turns that have an assembly trace, in order."""
    sid = (await ctx.session(name)).id
    return await ctx.facade.context.turns(sid)


@router.get("")
async def context_trace(ctx: Ctx, name: str, turn: Turn | None = None) -> ContextAssembled:
    """How the prompt of ``turn`` (default: the last turn) was assembled."""
    sid = (await ctx.session(name)).id
    trace = await ctx.facade.context.trace(sid, turn)
    if trace is None:
        which = f"turn {turn}" if turn is not None else "any turn"
        raise NotFound("context trace", f"{name} {which}")
    return trace


@router.get("/summaries")
async def context_summaries(ctx: Ctx, name: str) -> list[SummaryOut]:
    """Compaction summaries, each with the seq range of the events it replaced."""
    sid = (await ctx.session(name)).id
    return [SummaryOut.of(e) for e in await ctx.facade.context.summaries(sid)]


@router.get("/replay")
async def context_replay(ctx: Ctx, name: str, turn: Turn) -> list[ChatMessage]:
    """The exact messages the model was sent for ``turn``, rebuilt from the log alone."""
    sid = (await ctx.session(name)).id
    if turn not in await ctx.facade.context.turns(sid):
        raise NotFound("context trace", f"{name} turn {turn}")
    return list(await ctx.facade.context.replay(sid, turn))


@router.get("/recall")
async def context_recall(
    ctx: Ctx,
    name: str,
    q: RecallQuery,
    k: RecallK = 10,
    scope: Literal["session", "workspace"] = "session",
) -> RecallOut:
    """Search what was said in this session (or every session of its workspace), including
    turns that compaction summarised away."""
    info = await ctx.session(name)
    where = Path(info.workspace_path)  # a session is found only in its own workspace
    if scope == "session":
        result = await ctx.facade.retrieval.recall(q, session=info.id, workspace=where, k=k)
    else:
        result = await ctx.facade.retrieval.recall(q, workspace=where, k=k)
    hits = [RecallHitOut.model_validate(hit.to_json()) for hit in result.hits]
    return RecallOut(
        query=q,
        scope=scope,
        indexed=result.indexed,
        floor=result.floor,
        below_floor=result.below_floor,
        hits=hits,
    )


@router.get("/item")
async def context_item(ctx: Ctx, name: str, turn: Turn, ref: Ref) -> ItemTextOut:
    """One item of ``turn``'s assembly (``ref`` as in the trace) expanded to its text."""
    sid = (await ctx.session(name)).id
    if turn not in await ctx.facade.context.turns(sid):
        raise NotFound("context trace", f"{name} turn {turn}")
    text = await ctx.facade.context.expand(sid, ref, turn=turn)
    return ItemTextOut(turn=turn, ref=ref, text=text)
