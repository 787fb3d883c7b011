"""Memory decisions, edits and queries, as the surfaces see them.

Each method resolves what a surface names (a workspace path, a session name, the workspace's
config) and makes one call: to the memory service (``kairox.memory.service``, where the rules
are) or to the store.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.app.sessions import resolve_in
from kairox.core.aio import blocking, shielded
from kairox.core.config_load import ConfigCache
from kairox.core.errors import InvalidInput, NotFound
from kairox.core.events import UntrustedInput
from kairox.core.ids import workspace_id_for
from kairox.core.names import check_name
from kairox.core.records import (
    MemoryHit,
    MemoryRecord,
    MemoryVersion,
    MemoryView,
    check_body,
)
from kairox.core.types import Actor, MemoryOrigin, MemoryScope, MemoryStatus
from kairox.memory.service import (
    MemoryPolicy,
    Proposal,
    Routed,
    belongs,
    in_view,
    new_memory,
)
from kairox.memory.transfer import (
    ImportReport,
    TransferFormat,
    export_text,
    import_drafts,
    parse_text,
)
from kairox.retrieval.sources import SourceCache
from kairox.services import Services

if TYPE_CHECKING:  # the runtime loads when extraction runs, not with `memory list`
    from kairox.core.messages import ChatMessage
    from kairox.runtime.engine import Engine

DEFAULT_STATUSES = (MemoryStatus.ACCEPTED, MemoryStatus.PENDING)


class MemoryArea:
    def __init__(
        self,
        services: Services,
        configs: ConfigCache,
        sources: SourceCache,
        engine: Callable[[], Engine],
    ) -> None:
        self._s = services
        self._configs = configs
        self._sources = sources
        self._engine = engine

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
        """The memories visible from the workspace (and ``session``), oldest first. With ``text``,
        those matching it (``search``): by meaning, those containing it first, best first."""
        if text is not None and text.strip():
            hits = await self._search(
                text,
                workspace=workspace,
                session=session,
                scopes=scopes,
                statuses=statuses,
                all_sessions=all_sessions,
                k=None,
            )
            return [h.record for h in hits]
        view = await blocking(self.view, workspace, session)
        records = await blocking(
            self._s.memories.list,
            view,
            scopes=scopes,
            statuses=statuses,
            all_sessions=all_sessions,
        )
        return await blocking(self._seen_from, records, view.workspace_id)

    def _seen_from(
        self, records: Sequence[MemoryRecord], workspace_id: str
    ) -> builtins.list[MemoryRecord]:
        """``records`` as a caller in ``workspace_id`` sees them: a user memory proposed in
        another workspace's session does not name that session (no id crosses workspaces)."""

        def foreign_candidate(r: MemoryRecord) -> bool:
            return r.scope is MemoryScope.USER and r.proposed_session_id is not None

        if not any(foreign_candidate(r) for r in records):
            return list(records)
        here = {s.id for s in self._s.sessions.list(workspace_id, include_archived=True)}
        return [
            r.model_copy(update={"proposed_session_id": None})
            if foreign_candidate(r) and r.proposed_session_id not in here
            else r
            for r in records
        ]

    async def search(
        self,
        query: str,
        *,
        workspace: str | Path,
        session: str | None = None,
        scopes: Sequence[MemoryScope] | None = None,
        k: int = 10,
        statuses: Sequence[MemoryStatus] | None = DEFAULT_STATUSES,
        all_sessions: bool = False,
        min_score: float | None = None,
    ) -> builtins.list[MemoryHit]:
        """Memories matching ``query`` by meaning, best first: those whose key or body contains
        the query come first (score 1.0), then the ones the workspace's ranker finds (keyword +
        the configured embedder, on retrieval's absolute scale) at or above ``min_score``
        (default ``[retrieval] min_score``; 0 keeps every ranked one). Visible memories only
        (the user's, the workspace's, ``session``'s, or every session's with ``all_sessions``),
        of ``statuses`` (default accepted and pending; None is all)."""
        if k <= 0:
            raise InvalidInput(f"k must be at least 1, got {k}")
        return await self._search(
            query,
            workspace=workspace,
            session=session,
            scopes=scopes,
            k=k,
            statuses=statuses,
            all_sessions=all_sessions,
            min_score=min_score,
        )

    async def _search(
        self,
        query: str,
        *,
        workspace: str | Path,
        session: str | None,
        scopes: Sequence[MemoryScope] | None,
        k: int | None,
        statuses: Sequence[MemoryStatus] | None,
        all_sessions: bool,
        min_score: float | None = None,
    ) -> builtins.list[MemoryHit]:
        """``search``; ``k`` None returns every match (``list`` with ``text``)."""
        view = await blocking(self.view, workspace, session)
        loaded = await blocking(self._configs.get, workspace)
        index = self._sources.memory_index(loaded.config.retrieval.embedder)
        hits = await blocking(
            self._s.approval.search,
            query,
            view,
            rank=lambda text, ws, limit: index.search(text, workspace_id=ws, k=limit),
            floor=loaded.config.retrieval.min_score if min_score is None else min_score,
            k=k,
            scopes=scopes,
            statuses=statuses,
            all_sessions=all_sessions,
        )
        shown = await blocking(self._seen_from, [h.record for h in hits], view.workspace_id)
        return [h.model_copy(update={"record": r}) for h, r in zip(hits, shown, strict=True)]

    async def propose(
        self,
        *,
        workspace: str | Path,
        session: str | None,
        scope: MemoryScope,
        key: str | None,
        body: str,
        untrusted: Sequence[UntrustedInput] = (),
    ) -> Routed:
        """Propose a memory from outside a turn (the MCP server); the approval policy applies,
        with ``untrusted`` (the untrusted text the proposer had received) as its provenance, as
        for a turn's proposals. An identical proposal writes nothing and comes back as
        ``duplicate``."""
        if key is not None:
            check_name(key, what="a memory key")
        check_body(body)
        view = await blocking(self.view, workspace, session)
        if scope is MemoryScope.SESSION and view.session_id is None:
            raise InvalidInput("session memory needs a session; start the server with --session")
        proposal = Proposal(scope, key, body, tuple(untrusted), origin=MemoryOrigin.CLIENT)
        return await self._route(workspace, view, proposal)

    async def _route(self, workspace: str | Path, view: MemoryView, proposal: Proposal) -> Routed:
        loaded = await blocking(self._configs.get, workspace)
        records = await shielded(
            self._s.approval.route,
            [proposal],
            workspace_id=view.workspace_id,
            session_id=view.session_id,
            turn=None,
            policy=MemoryPolicy.from_config(loaded.config.memory),
        )
        return records[0]

    async def visible(
        self, memory_id: str, *, workspace: str | Path, session: str | None = None
    ) -> MemoryRecord:
        """The memory ``memory_id`` if it belongs to the user, to ``workspace``, or to
        ``session``; NotFound otherwise (a surface bound to one workspace never reads another's)."""
        view = await blocking(self.view, workspace, session)
        record = await blocking(
            lambda: self._s.memories.get(memory_id, workspace_id=view.workspace_id)
        )
        if not in_view(record, view):
            raise NotFound("memory", memory_id)
        [seen] = await blocking(self._seen_from, [record], view.workspace_id)
        return seen

    async def update(
        self,
        memory_id: str,
        body: str,
        *,
        workspace: str | Path,
        session: str | None = None,
        untrusted: Sequence[UntrustedInput] = (),
    ) -> Routed:
        """A change asked for by an agent, not the user: a session memory's body, or a pending
        proposal's, changes at once (with the taint the change adds); a change to an accepted
        user or workspace memory is a proposal for the same key, which the user decides like a
        new one (approving it makes a new version of the memory)."""
        check_body(body)
        record = await self.visible(memory_id, workspace=workspace, session=session)
        view = await blocking(self.view, workspace, session)
        loaded = await blocking(self._configs.get, workspace)
        return await shielded(
            lambda: self._s.approval.update(
                record,
                body,
                view,
                untrusted=untrusted,
                policy=MemoryPolicy.from_config(loaded.config.memory),
            )
        )

    async def forget(
        self,
        memory_id: str,
        *,
        workspace: str | Path,
        session: str | None = None,
        untrusted: Sequence[UntrustedInput] = (),
    ) -> Routed:
        """A delete asked for by an agent: a session memory is deleted at once; deleting a user
        or workspace memory is a proposal the user decides (approving it deletes the memory)."""
        record = await self.visible(memory_id, workspace=workspace, session=session)
        view = await blocking(self.view, workspace, session)
        return await shielded(lambda: self._s.approval.forget(record, view, untrusted=untrusted))

    @staticmethod
    def protocol_text() -> str:
        """The ``<memory>`` marker protocol and its scopes, as a model is taught it."""
        from kairox.memory.protocol import MEMORY_PROTOCOL

        return MEMORY_PROTOCOL

    async def add(
        self,
        *,
        workspace: str | Path,
        session: str | None,
        scope: MemoryScope,
        key: str | None,
        body: str,
        propose: bool = False,
    ) -> MemoryRecord:
        """Write the caller's own memory (the library API's ``add``). A direct write is the
        user's, so it is proposed and accepted by the user in one transaction (no policy
        applies); ``propose=True`` routes it through the approval policy instead, like a
        model's proposal. A memory that already says exactly this comes back as it is (a
        pending one is accepted by a direct write); a key that holds another body gets a new
        version. A user or workspace memory without a key gets one derived from its body."""
        key, text = new_memory(scope, key, body, has_session=session is not None)
        if propose:
            routed = await self.propose(
                workspace=workspace, session=session, scope=scope, key=key, body=text
            )
            return routed.record
        view = await blocking(self.view, workspace, session)
        await shielded(self._s.sessions.ensure_workspace, workspace)
        return await shielded(self._s.approval.write, view, scope, key, text)

    async def extract(
        self,
        messages: Sequence[ChatMessage],
        *,
        workspace: str | Path,
        session: str | None = None,
        profile: str | None = None,
        untrusted: Sequence[UntrustedInput] = (),
    ) -> builtins.list[Routed]:
        """Proposals from a conversation, without a turn: one model call (``profile``'s model,
        default the session's or the workspace's) sees ``messages`` and the memories already
        known, and answers only with ``<memory>`` markers. They go through the approval policy
        like a reply's (user and workspace ones wait for the user; tool messages taint), recorded
        with ``origin: extraction``. Session memories need ``session``. ``untrusted`` is what
        the caller had received besides the conversation (it taints the proposals too)."""
        if not messages:
            raise InvalidInput("extract needs a conversation: at least one message")
        session_id: str | None = None
        if session is not None:
            info = await blocking(resolve_in, self._s.sessions, session, workspace)
            session_id = info.id
            profile = profile or info.profile
        await shielded(self._s.sessions.ensure_workspace, workspace)
        return await self._engine().extract(
            messages,
            workspace=workspace,
            session_id=session_id,
            profile=profile,
            untrusted=untrusted,
        )

    async def show(self, memory_id: str, *, workspace: str | Path | None = None) -> MemoryRecord:
        return await self._visible(memory_id, workspace)

    async def approve(
        self, memory_id: str, *, body: str | None = None, workspace: str | Path | None = None
    ) -> MemoryRecord:
        memory_id = (await self._visible(memory_id, workspace)).id
        if body is not None:
            check_body(body)
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
        check_body(body)
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
        return {i for i in found if belongs(await blocking(self._s.memories.get, i), ws_id)}

    async def history(
        self, memory_id: str, *, workspace: str | Path | None = None
    ) -> builtins.list[MemoryVersion]:
        """Every version of the memory, oldest first; a ``reject`` carries its reason."""
        memory_id = (await self._visible(memory_id, workspace)).id
        return await blocking(self._history, memory_id)

    def _history(self, memory_id: str) -> builtins.list[MemoryVersion]:
        """The store's versions, each ``reject`` with the reason of the proposal it refused (a
        key's history holds its rejected proposals, each its own memory)."""
        memories = self._s.memories
        return [
            v.model_copy(update={"reason": memories.get(v.memory_id).decision_reason})
            if v.action == "reject"
            else v
            for v in memories.history(memory_id)
        ]

    async def _visible(self, memory_id: str, workspace: str | Path | None) -> MemoryRecord:
        """The memory ``memory_id`` (an id or a unique prefix) names. With ``workspace`` (a
        server for one workspace), a memory of another workspace or its sessions is not found,
        and a prefix is matched only among the user's memories and the workspace's own."""
        if workspace is None:
            return await blocking(self._s.memories.get, memory_id)
        ws_id = workspace_id_for(workspace)
        record = await blocking(lambda: self._s.memories.get(memory_id, workspace_id=ws_id))
        [seen] = await blocking(self._seen_from, [record], ws_id)
        return seen

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
        index_progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Import an export into the user's and ``workspace``'s memory; each change is an event.
        All or nothing: a bad file or a failure part-way writes nothing. The memory search index
        is then built in the same call (``index_progress(done, total)`` counts the memories
        embedded, a batch per transaction), so the first search or turn afterwards does not."""
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
        report = await shielded(
            import_drafts, self._s.memories, drafts, workspace_id=ws_id, progress=progress
        )
        if report.created or report.replaced or report.pending:
            loaded = await blocking(self._configs.get, workspace)
            index = self._sources.memory_index(loaded.config.retrieval.embedder)
            await shielded(index.build, ws_id, index_progress)
        return report
