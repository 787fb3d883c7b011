"""Memory decisions, edits and queries, as the surfaces see them."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from pathlib import Path

from kairox.app.sessions import resolve_in
from kairox.core.aio import blocking, shielded
from kairox.core.config_load import ConfigCache
from kairox.core.errors import InvalidInput, NotFound
from kairox.core.ids import workspace_id_for
from kairox.core.names import check_name
from kairox.core.records import MemoryRecord, MemoryVersion, MemoryView
from kairox.core.types import Actor, MemoryScope, MemoryStatus
from kairox.memory.service import MemoryPolicy, Proposal, Routed
from kairox.memory.transfer import (
    ImportReport,
    TransferFormat,
    export_text,
    import_drafts,
    parse_text,
)
from kairox.services import Services


class MemoryArea:
    def __init__(self, services: Services, configs: ConfigCache) -> None:
        self._s = services
        self._configs = configs

    def view(self, workspace: str | Path, session: str | None = None) -> MemoryView:
        session_id = resolve_in(self._s.sessions, session, workspace).id if session else None
        return MemoryView(workspace_id=workspace_id_for(workspace), session_id=session_id)

    async def list(
        self,
        *,
        workspace: str | Path,
        session: str | None = None,
        scopes: Sequence[MemoryScope] | None = None,
        statuses: Sequence[MemoryStatus] | None = None,
        text: str | None = None,
        all_sessions: bool = False,
    ) -> builtins.list[MemoryRecord]:
        view = await blocking(self.view, workspace, session)
        return await blocking(
            self._s.memories.list,
            view,
            scopes=scopes,
            statuses=statuses,
            text=text,
            all_sessions=all_sessions,
        )

    async def propose(
        self,
        *,
        workspace: str | Path,
        session: str | None,
        scope: MemoryScope,
        key: str | None,
        body: str,
    ) -> Routed:
        """Propose a memory from outside a turn (the MCP server); the approval policy applies.
        An identical proposal writes nothing and comes back as ``duplicate``."""
        if key is not None:
            check_name(key, what="a memory key")
        view = await blocking(self.view, workspace, session)
        if scope is MemoryScope.SESSION and view.session_id is None:
            raise InvalidInput("session memory needs a session; start the server with --session")
        loaded = await blocking(self._configs.get, workspace)
        records = await shielded(
            self._s.approval.route,
            [Proposal(scope=scope, key=key, body=body)],
            workspace_id=view.workspace_id,
            session_id=view.session_id,
            turn=None,
            policy=MemoryPolicy.from_config(loaded.config.memory),
        )
        return records[0]

    async def show(self, memory_id: str, *, workspace: str | Path | None = None) -> MemoryRecord:
        return await self._visible(memory_id, workspace)

    async def approve(
        self, memory_id: str, *, body: str | None = None, workspace: str | Path | None = None
    ) -> MemoryRecord:
        memory_id = (await self._visible(memory_id, workspace)).id
        return await shielded(self._s.memories.accept, memory_id, actor=Actor.USER, body=body)

    async def reject(
        self,
        memory_id: str,
        *,
        reason: str = "rejected by the user",
        workspace: str | Path | None = None,
    ) -> MemoryRecord:
        memory_id = (await self._visible(memory_id, workspace)).id
        return await shielded(self._s.memories.reject, memory_id, actor=Actor.USER, reason=reason)

    async def edit(
        self, memory_id: str, body: str, *, workspace: str | Path | None = None
    ) -> MemoryRecord:
        memory_id = (await self._visible(memory_id, workspace)).id
        return await shielded(self._s.memories.edit, memory_id, body, actor=Actor.USER)

    async def delete(self, memory_id: str, *, workspace: str | Path | None = None) -> MemoryRecord:
        memory_id = (await self._visible(memory_id, workspace)).id
        return await shielded(self._s.memories.delete, memory_id, actor=Actor.USER)

    async def undo(self, memory_id: str, *, workspace: str | Path | None = None) -> MemoryRecord:
        memory_id = (await self._visible(memory_id, workspace)).id
        return await shielded(self._s.memories.undo, memory_id, actor=Actor.USER)

    async def undoable(
        self, memory_ids: Sequence[str], *, workspace: str | Path | None = None
    ) -> set[str]:
        """Which of ``memory_ids`` ``undo`` applies to: their latest edit, replacement or delete
        is not undone yet (one query, for a whole list). With ``workspace``, only its own and
        the user's memories can be."""
        found = await blocking(self._s.memories.undoable, memory_ids)
        if workspace is None or not found:
            return found
        ws_id = workspace_id_for(workspace)
        return {i for i in found if _belongs(await blocking(self._s.memories.get, i), ws_id)}

    async def history(
        self, memory_id: str, *, workspace: str | Path | None = None
    ) -> builtins.list[MemoryVersion]:
        memory_id = (await self._visible(memory_id, workspace)).id
        return await blocking(self._s.memories.history, memory_id)

    async def _visible(self, memory_id: str, workspace: str | Path | None) -> MemoryRecord:
        """The memory ``memory_id`` (an id or a unique prefix) names. With ``workspace`` (a
        server for one workspace), a memory of another workspace or its sessions is not found:
        only the user's memories and the workspace's own are."""
        if workspace is None:
            return await blocking(self._s.memories.get, memory_id)
        try:
            record = await blocking(self._s.memories.get, memory_id)
        except InvalidInput:  # an ambiguous prefix: say so without naming others' ids
            raise InvalidInput(
                f"memory id prefix '{memory_id}' is ambiguous; type more of the id"
            ) from None
        if not _belongs(record, workspace_id_for(workspace)):
            raise NotFound("memory", memory_id)
        return record

    async def export(
        self,
        *,
        workspace: str | Path,
        fmt: TransferFormat = "json",
        session: str | None = None,
        scopes: Sequence[MemoryScope] | None = None,
        statuses: Sequence[MemoryStatus] | None = None,
        all_sessions: bool = False,
    ) -> str:
        """The memories ``list`` would return, as a JSON or Markdown document."""
        records = await self.list(
            workspace=workspace,
            session=session,
            scopes=scopes,
            statuses=statuses,
            all_sessions=all_sessions,
        )
        return export_text(records, fmt)

    async def import_(
        self,
        text: str | bytes,
        *,
        workspace: str | Path,
        fmt: TransferFormat,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Import an export into the user's and ``workspace``'s memory; each change is an event.
        All or nothing: a bad file or a failure part-way writes nothing."""
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise InvalidInput(
                    f"the import is not UTF-8 (invalid byte at offset {exc.start}); "
                    "save it as UTF-8"
                ) from None
        drafts = await blocking(parse_text, text, fmt)
        ws_id = await shielded(self._s.sessions.ensure_workspace, workspace)
        return await shielded(
            import_drafts, self._s.memories, drafts, workspace_id=ws_id, progress=progress
        )


def _belongs(record: MemoryRecord, workspace_id: str) -> bool:
    """A user memory is everyone's; a workspace or session memory is its workspace's."""
    return record.scope is MemoryScope.USER or record.workspace_id == workspace_id
