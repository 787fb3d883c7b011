"""The runtime for one home: one actor per session, and the handlers it runs for each command.

Each command resolves its ``CommandSetup`` once (``runtime.setup``) and passes it to the turn and
to compaction (``runtime.compactor``); the engine owns the actors and the providers they use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from kairox.context.tokens import TokenizerRegistry
from kairox.core.aio import blocking, shielded
from kairox.core.config_load import ConfigCache
from kairox.core.errors import SessionArchivedError
from kairox.core.ids import workspace_id_for
from kairox.core.outcomes import CompactionResult, Trigger, TurnOutcome
from kairox.core.types import SessionState
from kairox.memory.service import MemoryPolicy
from kairox.models import ModelProvider, Preloadable
from kairox.retrieval.sources import SourceCache
from kairox.runtime.actor import Handlers, SendMessage, SessionActor, SwitchProfile
from kairox.runtime.compactor import Compactor
from kairox.runtime.recall import SessionRecall, tool_text
from kairox.runtime.retrieval import TurnRetriever
from kairox.runtime.setup import CommandSetup, ProviderCache, Resolver
from kairox.runtime.tools import BuiltinTools
from kairox.runtime.turn import Turn, TurnDeps
from kairox.services import Services
from kairox.store.sessions import SessionInfo


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
        model_override: str | None = None,
        lease_wait_s: float = 0.0,
    ) -> None:
        self.services = services
        self.lease_wait_s = lease_wait_s
        self.sources = sources
        self.resolver = Resolver(configs, tokenizers, ProviderCache(), model_override)
        self.compactor = Compactor(services)
        self._actors: dict[str, SessionActor] = {}
        self._holder = self.services.sessions.default_holder()

    async def setup(self, session: str) -> CommandSetup:
        """Resolve what one command on ``session`` (an id) needs, once."""
        info = await blocking(self.services.sessions.get, session)
        return await blocking(self.resolver.resolve, info)

    def profile_provider(self, workspace: str | Path, alias: str | None = None) -> ModelProvider:
        """The provider a turn with profile ``alias`` (default: the workspace's) will use."""
        return self.resolver.profile_provider(workspace, alias)

    async def preload(self, workspace: str | Path, profile: str | None = None) -> bool:
        """Load the embedded model of ``profile`` into this process now if it is not loaded
        yet; True when it loaded. ``chat`` and ``serve`` call it at start."""
        provider = await blocking(self.resolver.profile_provider, workspace, profile)
        if not isinstance(provider, Preloadable) or provider.loaded:
            return False
        await provider.preload()
        return True

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

    async def shutdown(self) -> None:
        for actor in list(self._actors.values()):
            await actor.shutdown()
        await self.resolver.providers.aclose()

    # -- command handlers -----------------------------------------------------------------

    def _handlers(self, session_id: str) -> Handlers:
        current: dict[str, Turn] = {}

        async def send(text: str) -> TurnOutcome:
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

            async def release() -> None:
                renewing.cancel()
                await shielded(self.services.sessions.release_lease, session_id, self._holder)

            return release

        return Handlers(send=send, compact=compact, switch=switch, on_cancel=on_cancel, lease=lease)

    async def _renew(self, session_id: str) -> None:
        while True:
            await asyncio.sleep(10)
            await blocking(self.services.sessions.renew_lease, session_id, self._holder)

    def _build_turn(self, setup: CommandSetup) -> Turn:
        if setup.session.archived:
            raise SessionArchivedError(setup.session.name, setup.session.workspace_path)
        retrieval = setup.config.retrieval
        bindings, search_fn = self.sources.bindings(setup.loaded, setup.workspace)
        recall = SessionRecall(
            self.sources.history_index(retrieval.embedder),
            setup.config.recall,
            workspace_id=setup.session.workspace_id,
            session_id=setup.session.id,
            floor=retrieval.min_score,
        )

        async def recall_tool(query: str) -> str:
            return tool_text(await recall.search(query))

        return Turn(
            TurnDeps(
                services=self.services,
                session_id=setup.session.id,
                workspace_id=setup.session.workspace_id,
                profile_alias=setup.profile_alias,
                instructions=setup.profile.instructions,
                system_prompt=setup.system_prompt,
                provider=setup.provider(),
                tokenizer=setup.tokenizer,
                assembler=setup.assembler(),
                retriever=TurnRetriever(
                    bindings, max_results=retrieval.max_results, min_score=retrieval.min_score
                ),
                tools=BuiltinTools(
                    setup.workspace,
                    search_fn,
                    recall_tool,
                    deny=setup.config.tools.read_file_deny,
                    max_read_bytes=setup.config.tools.read_file_max_bytes,
                ),
                max_output_tokens=setup.max_output_tokens,
                policy=MemoryPolicy.from_config(setup.config.memory),
                recall=recall,
            )
        )
