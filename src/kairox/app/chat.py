"""Chat: start or resume sessions, send messages, switch profile, cancel, and compact.

Every call goes to the session's actor, so commands never overlap. ``open`` finds or starts a
session by name inside a workspace; the other calls take what it returns: the session's id (a name
unique in the home is accepted too, for scripts). ``send`` streams the session's
events from the store's one ordered stream (the same one ``facade.events.subscribe`` follows);
``run`` only waits for the outcome, for surfaces that already follow that stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from kairox.app.updates import ChatUpdate, TurnDone
from kairox.context.history import load_history
from kairox.context.render import data_blocks
from kairox.context.taint import untrusted_in_context
from kairox.core.aio import blocking
from kairox.core.errors import NotFound
from kairox.core.events import ContextAssembled, StoredEvent, UntrustedInput
from kairox.core.ids import looks_like_id, workspace_id_for
from kairox.core.messages import AgentItem, ChatMessage, RecordedItem
from kairox.core.names import check_prompt, check_session_name
from kairox.core.outcomes import AssembledContext, CompactionResult, HistoryEntry, TurnOutcome
from kairox.core.types import SessionState
from kairox.models.base import ModelProvider
from kairox.runtime.actor import Compact, SendMessage, SwitchProfile
from kairox.runtime.engine import Engine
from kairox.store.records import SessionInfo


class ChatArea:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def open(
        self, name: str, *, workspace: str | Path, profile: str | None = None
    ) -> SessionInfo:
        """The session ``name`` of ``workspace``, started when it does not exist there yet
        (names are per workspace: another workspace's session of that name is another one; an id
        of another workspace's session is not found)."""
        check_session_name(name)
        if looks_like_id(name, "ses"):  # an id names a session of this workspace, or none
            found = await blocking(
                self._engine.services.sessions.find, name, workspace_id_for(workspace)
            )
            if found is None:
                raise NotFound("session", name, by="name")
        return await self._engine.open_session(name, workspace=workspace, profile=profile)

    async def check_model(
        self, name: str, *, workspace: str | Path, profile: str | None = None
    ) -> None:
        """Refuse, before anything is created, a turn whose model cannot be called at all (no
        API key): ``ModelError`` with the one-line fix."""
        await self._engine.check_model(name, workspace=workspace, profile=profile)

    @staticmethod
    def check_prompt(text: str) -> None:
        """Refuse an empty or whitespace-only prompt before anything is created."""
        check_prompt(text)

    async def send(self, session: str, text: str) -> AsyncIterator[ChatUpdate]:
        """Run one turn, yielding each of the session's events as it is committed (once, in seq
        order), then ``TurnDone``."""
        check_prompt(text)
        async with contextlib.aclosing(self._engine.stream(session, text)) as items:
            async for item in items:
                yield TurnDone(item) if isinstance(item, TurnOutcome) else item

    async def run(self, session: str, text: str) -> TurnOutcome:
        """Run one turn and return its outcome; its events reach ``facade.events.subscribe``."""
        check_prompt(text)
        future = (await self._engine.actor_for(session)).enqueue(SendMessage(text))
        return await asyncio.shield(future)

    async def preload(self, workspace: str | Path, profile: str | None = None) -> bool:
        """Load the embedded model of ``profile`` (default: the workspace's) now, True if it had
        to load, so the first turn does not wait; ``chat`` and ``serve`` call this at start and
        keep the model loaded for the life of the process."""
        return await self._engine.preload(workspace, profile)

    async def preview(self, session: str, *, prompt: str = "") -> ContextAssembled:
        """What the session's next turn would carry, by source, without calling a model: the
        system prompt, memories and history the budget admits (a dry run of the assembler).
        Retrieval runs on the prompt itself, so workspace and knowledge-base hits are left out."""
        setup = await self._engine.setup(session)

        def assemble() -> ContextAssembled:
            target = setup.compaction_target(self._engine.services)
            history = load_history(
                target.events, target.session_id, target.tokenizer, max_tokens=target.budget.budget
            )
            return target.dry_run(history, prompt=prompt).trace

        return await blocking(assemble)

    async def model(self, session: str) -> str:
        """The model spec the session's next turn uses (``--model`` wins over the profile)."""
        info = await self._engine.session_info(session)
        return self._engine.resolver.model_of(info)

    async def assemble(
        self,
        session: str,
        prompt: str | None,
        *,
        model: str | ModelProvider | None = None,
        budget: int | None = None,
    ) -> AssembledContext:
        """The context the session's next turn would carry for ``prompt`` (memories, retrieval,
        recall, trimmed history), assembled for ``model`` (a spec or a provider; default: the
        session's) within ``budget`` prompt tokens, for the caller's own model call. With
        ``prompt=None`` the messages stop before the prompt (what any next turn starts from).
        Nothing is appended to the log."""
        if prompt is not None:
            check_prompt(prompt)
        assembly = await self._engine.assemble(session, prompt or "", model=model, budget=budget)
        messages = assembly.messages if prompt is not None else assembly.messages[:-1]
        return AssembledContext(
            messages=messages,
            trace=assembly.trace,
            untrusted=tuple(untrusted_in_context(assembly.trace.items)),
            data=data_blocks(assembly.plan),
        )

    async def record(
        self,
        session: str,
        messages: Sequence[ChatMessage | AgentItem],
        *,
        untrusted: Sequence[UntrustedInput] = (),
        model: str = "external",
    ) -> TurnOutcome:
        """Append an exchange that ran outside Kairox (an agent framework called ``model``) to
        the session's log as a turn would: user messages, tool results and replies become the
        same events, and ``<memory>`` markers in a reply become proposals through the approval
        policy, tainted by the tool results and by ``untrusted`` (what ``assemble`` returned).
        Queued behind a running turn, like every command on the session. An ``AgentItem`` is
        kept verbatim beside the event Kairox reads from it, and ``items`` returns it as it was
        given (system and developer messages, function calls, reasoning included)."""
        return await self._engine.record(session, messages, untrusted=untrusted, model=model)

    async def items(self, session: str) -> list[RecordedItem]:
        """The ``AgentItem``s recorded in the session, verbatim and oldest first, without those
        ``rewind`` took out (an agent framework's session storage)."""
        return await self._engine.items(session)

    async def history(self, session: str) -> list[HistoryEntry]:
        """The session's history as its next turn reads it (summaries and rewinds applied),
        oldest first."""
        items = await self._engine.history(session)
        return [HistoryEntry(seqs=item.seqs, messages=item.messages) for item in items]

    async def rewind(self, session: str, *, from_seq: int, to_seq: int, reason: str) -> StoredEvent:
        """Take events ``from_seq``..``to_seq`` out of the session's history: later contexts
        and recall leave them out, and the log keeps them (append-only). For an agent
        framework's ``pop`` and ``clear``."""
        return await self._engine.rewind(session, from_seq, to_seq, reason)

    async def compact(self, session: str) -> CompactionResult:
        """Compact now; queued behind a running turn, never run in the middle of one."""
        return await (await self._engine.actor_for(session)).submit(Compact("manual"))

    def compact_later(self, session: str) -> asyncio.Future[CompactionResult]:
        """Queue a compaction and return at once; the future resolves when it has run."""
        return self._engine.actor(session).enqueue(Compact("manual"))

    async def archive(self, session: str) -> SessionInfo:
        """Archive the session (an id) through its queue and lease, like compaction: after a
        running turn of this process; ``SessionBusy`` while another process holds the session
        (the facade's ``lease_wait_s`` waits for it)."""
        return await self._engine.archive(session)

    async def switch_profile(self, session: str, alias: str) -> SessionInfo:
        return await (await self._engine.actor_for(session)).submit(SwitchProfile(alias))

    async def cancel(self, session: str, reason: str = "cancelled by the user") -> bool:
        return (await self._engine.actor_for(session)).cancel(reason)

    def state(self, session: str) -> SessionState:
        return self._engine.actor(session).state

    def queued(self, session: str) -> int:
        return self._engine.actor(session).pending
