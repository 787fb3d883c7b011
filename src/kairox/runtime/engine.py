"""The runtime for one home: one actor per session, and the handlers it runs for each command.

Each command resolves its ``CommandSetup`` once (``runtime.setup``) and passes it to the turn and
to compaction (``runtime.compactor``); the engine owns the actors and the providers they use.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path

from kairox.context.assembler import Assembly
from kairox.context.history import HistoryItem, load_history
from kairox.context.history_cache import HistoryCache
from kairox.context.tokens import TokenizerRegistry
from kairox.core.aio import blocking, shielded
from kairox.core.config_load import ConfigCache
from kairox.core.errors import InvalidInput, ModelError, SessionArchivedError
from kairox.core.events import StoredEvent, TurnFailed, UntrustedInput, UserMessageAdded
from kairox.core.ids import workspace_id_for
from kairox.core.messages import AgentItem, ChatMessage, RecordedItem
from kairox.core.outcomes import CompactionResult, Trigger, TurnOutcome
from kairox.core.types import SessionState
from kairox.memory.extraction import conversation_taint
from kairox.memory.protocol import example_texts
from kairox.memory.service import MemoryPolicy, Routed
from kairox.models import Checkable, ModelProvider, Preloadable
from kairox.retrieval.composite import SourceBinding
from kairox.retrieval.file_policy import FilePolicy
from kairox.retrieval.sources import SourceCache
from kairox.runtime.actor import Handlers, Run, SendMessage, SessionActor, SwitchProfile
from kairox.runtime.compactor import Compactor
from kairox.runtime.extraction import Extraction, after_turn, extract
from kairox.runtime.recall import SessionRecall, tool_text
from kairox.runtime.record import Recorder, recorded_items
from kairox.runtime.retrieval import TurnRetriever
from kairox.runtime.setup import CommandSetup, ProviderCache, Resolver
from kairox.runtime.stream import stream_turn
from kairox.runtime.tools import BuiltinTools
from kairox.runtime.turn import ContextDeps, Turn, TurnDeps, gather, model_label
from kairox.services import Services
from kairox.store.records import SessionInfo

# The reason of the TurnFailed that closes a turn whose process died without ending it.
INTERRUPTED = "interrupted"


class Engine:
    """Owns the session actors of this process. The per-process caches (configs, tokenizers,
    retrieval sources) come from the facade, so every area of one process shares them."""

    def __init__(
        self,
        services: Services,
        *,
        configs: ConfigCache,
        tokenizers: TokenizerRegistry,
        sources: SourceCache,
        model_override: str | ModelProvider | None = None,
        lease_wait_s: float = 0.0,
    ) -> None:
        self.services = services
        self.lease_wait_s = lease_wait_s
        self.sources = sources
        # A provider instance overrides the model like a spec does, under its own spec.
        pinned: ModelProvider | None = None
        spec: str | None
        if model_override is None or isinstance(model_override, str):
            spec = model_override
        else:
            pinned, spec = model_override, model_override.spec
        self.resolver = Resolver(
            configs, tokenizers, ProviderCache(pinned, home=services.home), spec
        )
        self.compactor = Compactor(services)
        self._actors: dict[str, SessionActor] = {}
        # Each session's history items, kept across its turns (its actor runs one at a time).
        self._histories: dict[str, HistoryCache] = {}
        self._holder = self.services.sessions.default_holder()

    async def setup(self, session: str) -> CommandSetup:
        """Resolve what one command on ``session`` (an id) needs, once."""
        info = await blocking(self.services.sessions.get, session)
        return await blocking(self.resolver.resolve, info)

    def profile_provider(self, workspace: str | Path, alias: str | None = None) -> ModelProvider:
        """The provider a turn with profile ``alias`` (default: the workspace's) will use."""
        return self.resolver.profile_provider(workspace, alias)

    async def extract(
        self,
        conversation: Sequence[ChatMessage],
        *,
        workspace: str | Path,
        session_id: str | None = None,
        profile: str | None = None,
        untrusted: Sequence[UntrustedInput] = (),
    ) -> list[Routed]:
        """Proposals from a conversation without a turn: one extraction call with ``profile``'s
        model (default: the workspace's), routed through the workspace's approval policy. Tool
        messages in the conversation taint what it proposes, and so does ``untrusted`` (what
        the caller had received, e.g. an MCP client's search results)."""
        loaded = await blocking(self.resolver.configs.get, workspace)
        alias = profile or loaded.config.default_profile
        if (loaded.config.profile(alias).extract or loaded.config.memory.extract) == "off":
            raise InvalidInput(
                f'memory extraction is off for profile {alias} ([memory] extract = "off"); '
                'set it to "inline" or "after_turn" to extract'
            )
        provider = await blocking(self.resolver.profile_provider, workspace, alias)
        job = Extraction(
            conversation=tuple(conversation),
            workspace_id=workspace_id_for(workspace),
            session_id=session_id,
            untrusted=tuple(dict.fromkeys((*conversation_taint(conversation), *untrusted))),
        )
        policy = MemoryPolicy.from_config(loaded.config.memory)
        return await extract(provider, self.services, job, policy)

    async def preload(self, workspace: str | Path, profile: str | None = None) -> bool:
        """Load the embedded model of ``profile`` into this process now if it is not loaded
        yet; True when it loaded. ``chat`` and ``serve`` call it at start."""
        provider = await blocking(self.resolver.profile_provider, workspace, profile)
        if not isinstance(provider, Preloadable) or provider.loaded:
            return False
        await provider.preload()
        return True

    def _history(self, session_id: str) -> HistoryCache:
        cache = self._histories.get(session_id)
        if cache is None:
            cache = self._histories[session_id] = HistoryCache(self.services.events, session_id)
        return cache

    async def check_model(
        self, name: str, *, workspace: str | Path, profile: str | None = None
    ) -> None:
        """Raise ``ModelError`` when the model a turn of session ``name`` would use cannot be
        called at all (no API key), before anything is created or appended."""
        existing = await blocking(self.services.sessions.find, name, workspace_id_for(workspace))
        alias = profile or (existing.profile if existing is not None else None)
        provider = await blocking(self.resolver.profile_provider, workspace, alias)
        failure = provider.unusable() if isinstance(provider, Checkable) else None
        if failure is not None:
            raise ModelError(provider.spec, failure.reason)

    # -- sessions ------------------------------------------------------------------------

    async def open_session(
        self, name: str, *, workspace: str | Path, profile: str | None = None
    ) -> SessionInfo:
        """The session ``name`` of ``workspace``, started there when it does not exist yet."""
        loaded = await blocking(self.resolver.configs.get, workspace)
        existing = await blocking(self.services.sessions.find, name, workspace_id_for(workspace))
        if existing is None:
            alias = profile or loaded.config.default_profile
            loaded.config.profile(alias)
            return await shielded(self.services.sessions.start, name, workspace, alias)
        if existing.archived:
            raise SessionArchivedError(existing.name, existing.workspace_path)
        if profile and profile != existing.profile:
            return await self.actor(existing.id).submit(SwitchProfile(profile))
        return existing

    async def session_info(self, session: str) -> SessionInfo:
        return await blocking(self.services.sessions.get, session)

    def actor(self, session: str) -> SessionActor:
        """The actor of a session, by id. Actors are keyed by id, since a name is only unique
        within its workspace (a name unique in the home is looked up, for tests and scripts)."""
        found = self._actors.get(session)
        if found is not None:
            return found
        return self._actor_of(self.services.sessions.get(session))

    async def actor_for(self, session: str) -> SessionActor:
        """``actor``, with the lookup of an unknown session off the event loop."""
        found = self._actors.get(session)
        if found is not None:
            return found
        return self._actor_of(await blocking(self.services.sessions.get, session))

    def _actor_of(self, info: SessionInfo) -> SessionActor:
        if info.id not in self._actors:
            self._actors[info.id] = SessionActor(info.name, self._handlers(info.id))
        return self._actors[info.id]

    async def send(self, session: str, text: str) -> TurnOutcome:
        return await (await self.actor_for(session)).submit(SendMessage(text))

    async def stream(
        self, session: str, text: str
    ) -> AsyncGenerator[StoredEvent | TurnOutcome, None]:
        """Run one turn on the session's actor, yielding each of the session's events of it as it
        is committed (once, in seq order), then its ``TurnOutcome``
        (``kairox.runtime.stream``)."""
        actor = await self.actor_for(session)
        info = await blocking(self.services.sessions.get, session)
        subscription = self.services.events.subscribe(session_id=info.id)
        async with contextlib.aclosing(stream_turn(actor, subscription, text)) as items:
            async for item in items:
                yield item

    async def shutdown(self) -> None:
        for actor in list(self._actors.values()):
            await actor.shutdown()
        await self.resolver.providers.aclose()

    # -- command handlers -----------------------------------------------------------------

    def _handlers(self, session_id: str) -> Handlers:
        current: dict[str, Turn] = {}

        async def send(command: SendMessage) -> TurnOutcome:
            text = command.text
            if not command.started.done():
                command.started.set_result(await blocking(self.services.events.last_seq))
            actor = self.actor(session_id)

            def busy(compacting: bool) -> None:  # shows "compacting" while it runs
                actor.set_state(
                    SessionState.COMPACTING if compacting else SessionState.RUNNING_TURN
                )

            setup = await self.setup(session_id)
            await self.compactor.before_turn(setup, text, busy=busy)
            turn = self._build_turn(setup)
            current["turn"] = turn
            outcome = await turn.run(text)
            if setup.extract_mode == "after_turn" and outcome.failure is None:
                outcome = await after_turn(turn, text, outcome)
            await self.compactor.after_turn(setup, busy=busy)
            return outcome

        async def on_cancel(reason: str) -> TurnOutcome:
            turn = current.get("turn")
            number = turn.current_turn if turn is not None else None
            if turn is None or number is None or turn.completed:
                return TurnOutcome(turn=number or 0, failure=reason)
            return await turn.fail(number, reason)

        async def switch(alias: str) -> SessionInfo:
            session = await blocking(self.services.sessions.get, session_id)
            loaded = await blocking(self.resolver.configs.get, session.workspace_path)
            loaded.config.profile(alias)
            return await shielded(self.services.sessions.switch_profile, session_id, alias)

        async def compact(trigger: Trigger) -> CompactionResult:
            return await self.compactor.compact(await self.setup(session_id), trigger=trigger)

        async def lease() -> Callable[[], Awaitable[None]]:
            await blocking(
                self.services.sessions.acquire_lease,
                session_id,
                self._holder,
                wait_s=self.lease_wait_s,
            )
            renewing = asyncio.create_task(self._renew(session_id))
            await shielded(self._close_interrupted, session_id)

            async def release() -> None:
                renewing.cancel()
                await shielded(self.services.sessions.release_lease, session_id, self._holder)

            return release

        return Handlers(
            send=send,
            compact=compact,
            switch=switch,
            on_cancel=on_cancel,
            lease=lease,
        )

    def _close_interrupted(self, session_id: str) -> None:
        """A turn whose process was killed (SIGKILL, power loss) has no end event. Holding the
        lease proves nobody runs it any more: close it as ``TurnFailed`` (reason
        ``interrupted``), so its prompt is never replayed into a later context."""
        events = self.services.events
        prompt = events.latest(session_id, "UserMessageAdded")
        if prompt is None or not isinstance(prompt.payload, UserMessageAdded):
            return
        if prompt.payload.recorded:  # an agent framework's exchange, open between its calls
            return
        for end in ("AssistantMessageCompleted", "TurnFailed"):
            found = events.latest(session_id, end)
            if found is not None and found.seq > prompt.seq:
                return
        events.append(
            TurnFailed(turn=prompt.payload.turn, reason=INTERRUPTED),
            session_id=session_id,
            workspace_id=prompt.workspace_id,
        )

    async def _renew(self, session_id: str) -> None:
        while True:
            await asyncio.sleep(10)
            await blocking(self.services.sessions.renew_lease, session_id, self._holder)

    def _context_deps(
        self, setup: CommandSetup, *, model: str, bindings: list[SourceBinding]
    ) -> ContextDeps:
        retrieval = setup.config.retrieval
        return ContextDeps(
            services=self.services,
            session_id=setup.session.id,
            workspace_id=setup.session.workspace_id,
            profile_alias=setup.profile_alias,
            instructions=setup.profile.instructions,
            system_prompt=setup.system_prompt,
            model=model,
            tokenizer=setup.tokenizer,
            assembler=setup.assembler(),
            retriever=TurnRetriever(
                bindings, max_results=retrieval.max_results, min_score=retrieval.min_score
            ),
            history=self._history(setup.session.id),
            recall=SessionRecall(
                self.sources.history_index(retrieval.embedder),
                setup.config.recall,
                workspace_id=setup.session.workspace_id,
                session_id=setup.session.id,
                floor=retrieval.min_score,
            ),
            memory_index=self.sources.memory_index(retrieval.embedder),
        )

    def _build_turn(self, setup: CommandSetup) -> Turn:
        if setup.session.archived:
            raise SessionArchivedError(setup.session.name, setup.session.workspace_path)
        provider = setup.provider()
        bindings, search_fn = self.sources.bindings(setup.loaded, setup.workspace)
        context = self._context_deps(setup, model=model_label(provider), bindings=bindings)
        recall = context.recall
        assert recall is not None

        async def recall_tool(query: str) -> str:
            return tool_text(await recall.search(query))

        return Turn(
            TurnDeps(
                **vars(context),
                provider=provider,
                tools=BuiltinTools(
                    setup.workspace,
                    search_fn,
                    recall_tool,
                    policy=FilePolicy.for_config(setup.loaded),
                    max_read_bytes=setup.config.tools.read_file_max_bytes,
                ),
                max_output_tokens=setup.max_output_tokens,
                extract=setup.extract_mode,
                policy=replace(
                    MemoryPolicy.from_config(setup.config.memory),
                    example_texts=example_texts(setup.system_prompt),
                ),
            )
        )

    async def assemble(
        self,
        session: str,
        prompt: str,
        *,
        model: str | ModelProvider | None = None,
        budget: int | None = None,
    ) -> Assembly:
        """The context the session's next turn would send for ``prompt``, assembled for
        ``model`` (default: the session's) within ``budget`` prompt tokens (default: the
        model's window less its headroom), for a model call of the caller's own. Nothing is
        appended to the log."""
        setup = await self.setup(session)
        spec = model if model is None or isinstance(model, str) else model.spec
        setup = await blocking(self.resolver.for_preview, setup, spec, budget)
        bindings, _search = self.sources.bindings(setup.loaded, setup.workspace)
        context = self._context_deps(setup, model=setup.model, bindings=bindings)
        events = self.services.events
        turn = await blocking(events.count, session_id=setup.session.id, types=["UserMessageAdded"])
        until = await blocking(events.last_seq)
        inputs = await gather(context, prompt, turn=turn + 1, until_seq=until, prompt_seq=None)
        return context.assembler.assemble(inputs)

    async def record(
        self,
        session: str,
        messages: Sequence[ChatMessage | AgentItem],
        *,
        untrusted: Sequence[UntrustedInput] = (),
        model: str = "external",
    ) -> TurnOutcome:
        """Append an exchange an agent framework ran to the session's log, on its actor."""

        async def work() -> TurnOutcome:
            setup = await self.setup(session)
            if setup.session.archived:
                raise SessionArchivedError(setup.session.name, setup.session.workspace_path)
            return await Recorder(self.services, setup, model=model).record(messages, untrusted)

        return await (await self.actor_for(session)).submit(Run(work))

    async def archive(self, session: str) -> SessionInfo:
        """Archive the session on its actor, like compaction: after a running turn, under the
        session's lease (``SessionBusy`` while another process holds it)."""

        async def work() -> SessionInfo:
            return await shielded(
                self.services.sessions.archive, session, self.services.memories.discard_session
            )

        return await (await self.actor_for(session)).submit(Run(work))

    async def rewind(self, session: str, from_seq: int, to_seq: int, reason: str) -> StoredEvent:
        """Take ``from_seq``..``to_seq`` out of the session's history, on its actor."""

        async def work() -> StoredEvent:
            setup = await self.setup(session)
            return await Recorder(self.services, setup, model="").rewind(from_seq, to_seq, reason)

        return await (await self.actor_for(session)).submit(Run(work))

    async def items(self, session: str) -> list[RecordedItem]:
        """The items an agent framework recorded in the session, verbatim (rewinds applied)."""
        setup = await self.setup(session)
        return await blocking(recorded_items, self.services.events, setup.session.id)

    async def history(self, session: str) -> list[HistoryItem]:
        """The session's whole history as a next turn reads it (rewinds and summaries applied)."""
        setup = await self.setup(session)
        return await blocking(load_history, self.services.events, setup.session.id, setup.tokenizer)
