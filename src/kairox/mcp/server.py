"""An MCP server exposing Kairox memory and workspace search to other agents.

Proposals made here go through the same approval policy as markers in a model's reply: user and
workspace memories wait for the user's decision in the TUI, the web UI or the CLI. Memory tools
answer with ``MemoryRecord``, the same JSON shape the CLI and the web API emit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from kairox.app import AppFacade
from kairox.core.errors import KairoxError, MissingExtra
from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope, MemoryStatus


class ProposedMemory(MemoryRecord):
    """The one memory JSON shape, plus whether the proposal was a duplicate."""

    duplicate: bool = False
    """True when an identical memory or proposal already existed: nothing was written."""


class SearchHit(BaseModel):
    source: str
    path: str | None
    start_line: int | None
    end_line: int | None
    score: float
    text: str


def build_server(facade: AppFacade, *, workspace: Path, session: str | None = None) -> Any:
    """The server object (``mcp.server.mcpserver.MCPServer``) bound to one workspace."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError as exc:
        raise MissingExtra("the MCP server", "mcp") from exc

    server = MCPServer(
        name="kairox",
        instructions=(
            "Kairox remembers facts about the user and this workspace. Use memory_search before "
            "asking the user again; use memory_propose for one new fact at a time (the user "
            "approves user and workspace memories)."
        ),
    )

    async def guarded(coro: Any) -> Any:
        try:
            return await coro
        except KairoxError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    async def memory_list(scope: str | None = None, status: str = "accepted") -> list[MemoryRecord]:
        """List the memories of this workspace and the user (default: accepted ones)."""
        scopes = [MemoryScope.parse(scope)] if scope else None
        records = await guarded(
            facade.memory.list(
                workspace=workspace,
                session=session,
                scopes=scopes,
                statuses=[MemoryStatus.parse(status)],
            )
        )
        return list(records)

    @server.tool()
    async def memory_search(query: str, k: int = 10) -> list[MemoryRecord]:
        """Accepted memories matching the query by meaning, best first (those containing the
        query's text first)."""
        hits = await guarded(
            facade.memory.search(
                query,
                workspace=workspace,
                session=session,
                statuses=[MemoryStatus.ACCEPTED],
                k=k,
            )
        )
        return [h.record for h in hits]

    @server.tool()
    async def memory_propose(scope: str, body: str, key: str | None = None) -> ProposedMemory:
        """Propose one fact to remember. User and workspace memories need a key and wait for
        the user's approval; session memories (when a session is bound) are accepted. Proposing
        what is already remembered (or already pending) changes nothing: ``duplicate`` is true."""
        routed = await guarded(
            facade.memory.propose(
                workspace=workspace,
                session=session,
                scope=MemoryScope.parse(scope),
                key=key,
                body=body,
            )
        )
        return ProposedMemory(**routed.record.model_dump(), duplicate=routed.duplicate)

    @server.tool()
    async def workspace_search(query: str, k: int = 5) -> list[SearchHit]:
        """Search the workspace index and knowledge bases."""
        hits, _errors = await guarded(facade.retrieval.search(query, workspace=workspace, k=k))
        return [
            SearchHit(
                source=h.source,
                path=h.path,
                start_line=h.start_line,
                end_line=h.end_line,
                score=h.score,
                text=h.text,
            )
            for h in hits
        ]

    return server
