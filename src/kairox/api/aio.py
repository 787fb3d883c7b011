"""``AsyncMemory``: store, find, review and assemble memories from async code.

Every method is one ``AppFacade`` call: what the CLI, the TUI, the web UI and the MCP server do
with a memory, a script does the same way, through the same approval rules and the same log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Literal, cast, overload

from kairox.app import AppFacade, AssembledContext, ChatMessage, ModelProvider
from kairox.core.errors import InvalidInput
from kairox.core.messages import Role
from kairox.core.records import MemoryHit, MemoryRecord, MemoryVersion
from kairox.core.types import MemoryScope, MemoryStatus

Messages = Sequence[ChatMessage | Mapping[str, str]]
"""A conversation: ``ChatMessage`` objects or ``{"role": ..., "content": ...}`` dicts."""
MessagesOrText = str | Messages
DEFAULT_SESSION = "main"
LIVE = (MemoryStatus.ACCEPTED, MemoryStatus.PENDING)


class AsyncMemory:
    """Memories of one home and workspace, for async code.

    >>> async with AsyncMemory() as memory:
    ...     record = await memory.add("I prefer tea", scope="user")

    ``home`` defaults to ``$KAIROX_HOME`` or the platform's data directory and ``workspace`` to
    the current directory, as for the CLI (the store is the home's, or ``$KAIROX_STORE_URL``).
    ``session`` names the session whose session memories, history and recall apply; ``model``
    (a spec such as ``openai:gpt-4o-mini`` or a ``ModelProvider`` instance) overrides the
    profiles' model. ``facade`` wraps an ``AppFacade`` you opened yourself (then ``close`` leaves
    it open).
    """

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        workspace: str | Path | None = None,
        session: str | None = None,
        model: str | ModelProvider | None = None,
        facade: AppFacade | None = None,
    ) -> None:
        if facade is not None and model is not None:
            raise InvalidInput("pass model= to AppFacade.open when you hand in a facade")
        self.facade = facade if facade is not None else AppFacade.open(home, model=model)
        self._owns_facade = facade is None
        self.workspace = Path(workspace if workspace is not None else Path.cwd()).resolve()
        self.session = session

    # -- writing -----------------------------------------------------------------------------

    @overload
    async def add(
        self,
        messages_or_text: str,
        *,
        scope: MemoryScope | str = ...,
        key: str | None = ...,
        workspace: str | Path | None = ...,
        session: str | None = ...,
        propose: bool = ...,
        infer: bool = ...,
    ) -> MemoryRecord: ...

    @overload
    async def add(
        self,
        messages_or_text: Messages,
        *,
        scope: MemoryScope | str = ...,
        key: str | None = ...,
        workspace: str | Path | None = ...,
        session: str | None = ...,
        propose: bool = ...,
        infer: Literal[True] = ...,
    ) -> list[MemoryRecord]: ...

    @overload
    async def add(
        self,
        messages_or_text: Messages,
        *,
        scope: MemoryScope | str = ...,
        key: str | None = ...,
        workspace: str | Path | None = ...,
        session: str | None = ...,
        propose: bool = ...,
        infer: Literal[False],
    ) -> MemoryRecord: ...

    async def add(
        self,
        messages_or_text: MessagesOrText,
        *,
        scope: MemoryScope | str = MemoryScope.USER,
        key: str | None = None,
        workspace: str | Path | None = None,
        session: str | None = None,
        propose: bool = False,
        infer: bool = True,
    ) -> MemoryRecord | list[MemoryRecord]:
        """Store what you tell it. A text is one memory of ``scope`` (``user`` by default): a
        direct write is your own, so it is accepted at once; ``propose=True`` makes a proposal
        that goes through the approval policy (a user or workspace memory then waits for
        ``approve``). ``key`` names a fact so a later ``add`` with that key replaces it (a new
        version); without one, a user or workspace memory gets a key derived from its body.

        A conversation (a list of messages) is read by the model, as ``extract`` does: the
        facts worth keeping come back as proposals, under the approval rules (user and
        workspace ones wait for ``approve``; a tool message taints them), and ``add`` returns
        them. ``infer=False`` stores the conversation verbatim instead, as one memory of
        ``scope``, a ``role: content`` line per message."""
        if not isinstance(messages_or_text, str) and infer:
            if key is not None:
                raise InvalidInput(
                    "key= names one memory; pass infer=False to store the conversation "
                    "verbatim under it"
                )
            return await self._extract(messages_or_text, workspace=workspace, session=session)
        body = _body(messages_or_text)
        ws = self._workspace(workspace)
        name = await self._session(session, ws)
        return await self.facade.memory.add(
            workspace=ws, session=name, scope=_scope(scope), key=key, body=body, propose=propose
        )

    async def update(self, memory_id: str, body: str) -> MemoryRecord:
        """Give a memory a new body (a new version; the old one stays in ``history``)."""
        return await self.facade.memory.edit(memory_id, body)

    async def delete(self, memory_id: str) -> MemoryRecord:
        """Delete a memory; it leaves every context, and its history stays."""
        return await self.facade.memory.delete(memory_id)

    async def approve(self, memory_id: str) -> MemoryRecord:
        """Accept a pending proposal."""
        return await self.facade.memory.approve(memory_id)

    async def reject(self, memory_id: str, *, reason: str = "rejected by the user") -> MemoryRecord:
        """Reject a pending proposal, with the reason recorded."""
        return await self.facade.memory.reject(memory_id, reason=reason)

    # -- reading -----------------------------------------------------------------------------

    async def get(self, memory_id: str) -> MemoryRecord:
        """One memory by id (``NotFound`` when there is none)."""
        return await self.facade.memory.show(memory_id)

    async def get_all(
        self,
        *,
        scope: MemoryScope | str | None = None,
        status: MemoryStatus | str | None = None,
    ) -> list[MemoryRecord]:
        """The memories in view (the user's, this workspace's and this session's), accepted and
        pending by default; ``scope`` and ``status`` narrow them."""
        ws = self._workspace(None)
        scopes = [_scope(scope)] if scope else None
        statuses = (
            [MemoryStatus.parse(status) if isinstance(status, str) else status] if status else LIVE
        )
        return await self.facade.memory.list(
            workspace=ws,
            session=await self._session(None, ws),
            scopes=scopes,
            statuses=statuses,
        )

    async def search(
        self, query: str, *, scope: MemoryScope | str | None = None, k: int = 10
    ) -> list[MemoryHit]:
        """The memories in view that match ``query`` by meaning, best first, each with its
        score in [0, 1] (1.0 when the key or body holds the query as typed); accepted and
        pending ones, of ``scope`` when given."""
        ws = self._workspace(None)
        return await self.facade.memory.search(
            query,
            workspace=ws,
            session=await self._session(None, ws),
            scopes=[_scope(scope)] if scope is not None else None,
            k=k,
        )

    async def extract(self, messages: Messages) -> list[MemoryRecord]:
        """Proposals from a conversation, for a caller with no Kairox turn loop: one model
        call (the profile's model, or ``model=`` of this instance) reads ``messages`` and the
        memories already known and proposes what is worth keeping. They go through the
        approval policy like a reply's markers: user and workspace proposals wait for
        ``approve``; a tool message taints them."""
        return await self._extract(messages, workspace=None, session=None)

    async def _extract(
        self, messages: Messages, *, workspace: str | Path | None, session: str | None
    ) -> list[MemoryRecord]:
        ws = self._workspace(workspace)
        routed = await self.facade.memory.extract(
            as_messages(messages), workspace=ws, session=await self._session(session, ws)
        )
        return [r.record for r in routed]

    async def history(self, memory_id: str) -> list[MemoryVersion]:
        """Every version of a memory, oldest first: who changed it, when, and to what."""
        return await self.facade.memory.history(memory_id)

    async def context(
        self,
        prompt: str,
        *,
        model: str | ModelProvider,
        budget: int | None = None,
    ) -> AssembledContext:
        """The messages to send ``model`` for ``prompt`` (memories, retrieved text, recall and
        the session's trimmed history, as a Kairox turn would assemble them), and the trace
        that says what each came from. ``budget`` caps the prompt tokens (default: the
        model's window less its reply headroom). Nothing is recorded: call your model with
        ``result.messages`` (or ``result.as_dicts()``)."""
        ws = self._workspace(None)
        name = await self._session(None, ws) or DEFAULT_SESSION
        info = await self.facade.sessions.ensure(name, workspace=ws)
        return await self.facade.chat.assemble(info.id, prompt, model=model, budget=budget)

    # -- lifetime ----------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop what the facade started and close the store (unless you handed the facade in)."""
        if self._owns_facade:
            await self.facade.aclose()
            self.facade.close()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- helpers -----------------------------------------------------------------------------

    def _workspace(self, workspace: str | Path | None) -> Path:
        return Path(workspace).resolve() if workspace is not None else self.workspace

    async def _session(self, session: str | None, workspace: Path) -> str | None:
        """The session to use (the call's, else the instance's), started when it is new."""
        name = session or self.session
        if name is None:
            return None
        return (await self.facade.sessions.ensure(name, workspace=workspace)).name


def as_messages(messages: Messages) -> list[ChatMessage]:
    """``messages`` as ``ChatMessage`` objects; a malformed item is a one-line ``InvalidInput``."""
    out: list[ChatMessage] = []
    for index, item in enumerate(messages):
        if isinstance(item, ChatMessage):
            out.append(item)
            continue
        role, content = item.get("role"), item.get("content")
        if role not in ("system", "user", "assistant", "tool") or not isinstance(content, str):
            raise InvalidInput(
                f"message {index} needs a role (system, user, assistant or tool) and a text "
                f'content, e.g. {{"role": "user", "content": "..."}}'
            )
        out.append(ChatMessage(role=cast(Role, role), content=content))
    return out


def _scope(scope: MemoryScope | str) -> MemoryScope:
    return MemoryScope.parse(scope) if isinstance(scope, str) else scope


def _body(messages_or_text: MessagesOrText) -> str:
    if isinstance(messages_or_text, str):
        return messages_or_text
    lines = [f"{m.role}: {m.content}" for m in as_messages(messages_or_text)]
    return "\n".join(lines)
