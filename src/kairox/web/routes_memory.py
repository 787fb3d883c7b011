"""Memory routes: list, show, decide, edit, delete, undo, history, export and import.

Each route is one facade call, scoped to the server's workspace: lists hold the user's memories,
the workspace's, and (on request) its session memories; a memory of another workspace, by id or
prefix, is 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from kairox.app import ImportReport, TransferFormat
from kairox.core.records import MemoryRecord, MemoryVersion
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.web.deps import Ctx
from kairox.web.models import (
    ApproveIn,
    EditIn,
    ExportOut,
    ImportIn,
    RejectIn,
    UndoableIn,
    UndoableOut,
)

router = APIRouter(prefix="/api/memories", tags=["memory"])

Scopes = Annotated[list[MemoryScope] | None, Query(alias="scope")]
Statuses = Annotated[list[MemoryStatus] | None, Query(alias="status")]
Text = Annotated[str | None, Query(max_length=500)]
SessionName = Annotated[str | None, Query(max_length=200)]


@router.get("")
async def list_memories(
    ctx: Ctx,
    scope: Scopes = None,
    status: Statuses = None,
    text: Text = None,
    session: SessionName = None,
    all_sessions: bool = False,
) -> list[MemoryRecord]:
    """Memories of the user and the server's workspace (plus session memories on request)."""
    session_id = (await ctx.session(session)).id if session else None
    return await ctx.facade.memory.list(
        workspace=ctx.workspace,
        session=session_id,
        scopes=scope or None,
        statuses=status or None,
        text=text or None,
        all_sessions=all_sessions,
    )


@router.get("/export")
async def export_memories(
    ctx: Ctx,
    format: TransferFormat = "json",
    scope: Scopes = None,
    status: Statuses = None,
    all_sessions: bool = False,
) -> ExportOut:
    """The listed memories as a JSON or Markdown document, ready to save."""
    content = await ctx.facade.memory.export(
        workspace=ctx.workspace,
        fmt=format,
        scopes=scope or None,
        statuses=status or None,
        all_sessions=all_sessions,
    )
    suffix = "json" if format == "json" else "md"
    return ExportOut(format=format, filename=f"kairox-memories.{suffix}", content=content)


@router.post("/import")
async def import_memories(ctx: Ctx, body: ImportIn) -> ImportReport:
    """Import a JSON or Markdown export into the user's and the workspace's memory."""
    return await ctx.facade.memory.import_(body.content, workspace=ctx.workspace, fmt=body.format)


@router.post("/undoable")
async def undoable_memories(ctx: Ctx, body: UndoableIn) -> UndoableOut:
    """Which of these memories ``undo`` applies to (the page offers Undo only for those). A
    memory's JSON stays the one shape the CLI and the MCP server emit, so this is its own call."""
    found = await ctx.facade.memory.undoable(body.ids, workspace=ctx.workspace)
    return UndoableOut(ids=[i for i in dict.fromkeys(body.ids) if i in found])


@router.get("/{memory_id}")
async def show_memory(ctx: Ctx, memory_id: str) -> MemoryRecord:
    return await ctx.facade.memory.show(memory_id, workspace=ctx.workspace)


@router.post("/{memory_id}/approve")
async def approve_memory(ctx: Ctx, memory_id: str, body: ApproveIn | None = None) -> MemoryRecord:
    """Approve a pending proposal, optionally with an edited body."""
    return await ctx.facade.memory.approve(
        memory_id, body=body.body if body else None, workspace=ctx.workspace
    )


@router.post("/{memory_id}/reject")
async def reject_memory(ctx: Ctx, memory_id: str, body: RejectIn | None = None) -> MemoryRecord:
    reason = body.reason if body else RejectIn().reason
    return await ctx.facade.memory.reject(memory_id, reason=reason, workspace=ctx.workspace)


@router.patch("/{memory_id}")
async def edit_memory(ctx: Ctx, memory_id: str, body: EditIn) -> MemoryRecord:
    """Replace the body; the old body stays in the history, and undo brings it back."""
    return await ctx.facade.memory.edit(memory_id, body.body, workspace=ctx.workspace)


@router.delete("/{memory_id}")
async def delete_memory(ctx: Ctx, memory_id: str) -> MemoryRecord:
    return await ctx.facade.memory.delete(memory_id, workspace=ctx.workspace)


@router.post("/{memory_id}/undo")
async def undo_memory(ctx: Ctx, memory_id: str) -> MemoryRecord:
    """Undo the latest edit or delete."""
    return await ctx.facade.memory.undo(memory_id, workspace=ctx.workspace)


@router.get("/{memory_id}/history")
async def memory_history(ctx: Ctx, memory_id: str) -> list[MemoryVersion]:
    """Every version, oldest first."""
    return await ctx.facade.memory.history(memory_id, workspace=ctx.workspace)
