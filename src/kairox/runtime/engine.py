"""The runtime for one home: config per workspace, model providers, and one actor per session.

The engine turns a session name into everything a turn needs (profile, provider, tokenizer,
budget, assembler, retrieval, tools) and owns the session actors of this process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from kairox.context.assembler import ContextAssembler, Quotas
from kairox.context.tokens import Tokenizer, TokenizerRegistry
from kairox.context.windows import resolve_window
from kairox.core.aio import blocking, shielded
from kairox.core.config import ProfileConfig
from kairox.core.config_load import LoadedConfig, load_config
from kairox.core.events import StoredEvent, TurnFailed
from kairox.core.ids import workspace_id_for
from kairox.core.types import SessionState
from kairox.runtime.actor import Handlers, SendMessage, SessionActor, SwitchProfile
from kairox.runtime.models import ModelProvider, Preloadable, ProviderSettings, create_provider
from kairox.runtime.retrieval import TurnRetriever
from kairox.runtime.services import Services
from kairox.runtime.sources import SourceCache
from kairox.runtime.tools import BuiltinTools
from kairox.runtime.turn import Turn, TurnDeps, TurnOutcome
from kairox.store.sessions import SessionInfo

Sink = Callable[[StoredEvent], None]


@dataclass(frozen=True)
class ResolvedProfile:
    alias: str
    config: ProfileConfig
    model: str


class Engine:
    def __init__(
        self, services: Services, *, model_override: str | None = None, lease_wait_s: float = 0.0
    ) -> None:
        self.services = services
        self.model_override = model_override
        self.lease_wait_s = lease_wait_s
        self.tokenizers = TokenizerRegistry()
        self._configs: dict[Path, LoadedConfig] = {}
        self._providers: dict[str, ModelProvider] = {}
        self._actors: dict[str, SessionActor] = {}
        self._sinks: dict[str, list[Sink]] = {}
        self._holder = self.services.sessions.default_holder()
        self.sources = SourceCache(services)

    # -- configuration ------------------------------------------------------------------

    def config_for(self, workspace: str | Path) -> LoadedConfig:
        root = Path(workspace).resolve()
        if root not in self._configs:
            self._configs[root] = load_config(root)
        return self._configs[root]

    def profile_for(self, session: SessionInfo) -> ResolvedProfile:
        config = self.config_for(session.workspace_path).config
        profile = config.profile(session.profile)
        return ResolvedProfile(session.profile, profile, self.model_override or profile.model)

    def tokenizer_for(self, model: str) -> Tokenizer:
        return self.tokenizers.for_model(model)

    def provider(self, model: str, profile: ProfileConfig, *, window: int) -> ModelProvider:
        key = f"{model}|{profile.base_url}|{profile.api_key_env}|{window}"
        if key not in self._providers:
            settings = ProviderSettings(
                base_url=profile.base_url,
                api_key_env=profile.api_key_env,
                timeout_s=profile.timeout_s,
                n_ctx=window,
            )
            self._providers[key] = create_provider(model, settings=settings)
        return self._providers[key]

    def profile_provider(self, workspace: str | Path, alias: str | None = None) -> ModelProvider:
        """The provider a turn with profile ``alias`` (default: the workspace's) will use; built
        once per process and kept, so an embedded model is loaded once."""
        config = self.config_for(workspace).config
        name = alias or config.default_profile
        profile = config.profile(name)
        model = self.model_override or profile.model
        budget = resolve_window(
            model, context_window=profile.context_window, headroom=profile.headroom
        )
        return self.provider(model, profile, window=budget.window)

    async def preload(self, workspace: str | Path, profile: str | None = None) -> bool:
        """Load the embedded model of ``profile`` into this process now if it is not loaded
        yet; True when it loaded. ``chat`` and ``serve`` call it at start."""
        provider = self.profile_provider(workspace, profile)
        if not isinstance(provider, Preloadable) or provider.loaded:
            return False
        await provider.preload()
        return True

    # -- sessions ------------------------------------------------------------------------

    async def open_session(
        self, name: str, *, workspace: str | Path, profile: str | None = None
    ) -> SessionInfo:
        loaded = self.config_for(workspace)
        existing = await blocking(self.services.sessions.find, name)
        if existing is None:
            alias = profile or loaded.config.default_profile
            loaded.config.profile(alias)
            return await shielded(self.services.sessions.start, name, workspace, alias)
        if existing.workspace_id != workspace_id_for(workspace):
            return await shielded(
                self.services.sessions.start, name, workspace, existing.profile
            )  # raises the clear mismatch error
        if profile and profile != existing.profile:
            await self.actor(name).submit(SwitchProfile(profile))
            return await blocking(self.services.sessions.get, name)
        return existing

    async def session_info(self, name: str) -> SessionInfo:
        return await blocking(self.services.sessions.get, name)

    def actor(self, name: str) -> SessionActor:
        if name not in self._actors:
            self._actors[name] = SessionActor(name, self._handlers(name))
        return self._actors[name]

    def subscribe(self, name: str, sink: Sink) -> Callable[[], None]:
        self._sinks.setdefault(name, []).append(sink)
        return lambda: self._sinks[name].remove(sink)

    async def send(self, name: str, text: str) -> TurnOutcome:
        outcome: TurnOutcome = await self.actor(name).submit(SendMessage(text))
        return outcome

    async def shutdown(self) -> None:
        for actor in list(self._actors.values()):
            await actor.shutdown()
        for provider in self._providers.values():
            await provider.aclose()

    # -- command handlers -----------------------------------------------------------------

    def _handlers(self, name: str) -> Handlers:
        current: dict[str, Turn] = {}

        def sink(event: StoredEvent) -> None:
            for s in list(self._sinks.get(name, [])):
                s(event)

        async def send(text: str) -> TurnOutcome:
            from kairox.compaction.pipeline import compact_if_needed

            actor = self.actor(name)

            def busy(compacting: bool) -> None:  # shows "compacting" while it runs
                actor.set_state(
                    SessionState.COMPACTING if compacting else SessionState.RUNNING_TURN
                )

            # After a switch to a smaller window, compact first if the prompt would not fit.
            await compact_if_needed(self, name, sink=sink, prompt=text, busy=busy)
            turn = await self._build_turn(name, sink)
            current["turn"] = turn
            outcome = await turn.run(text)
            # Before the actor takes the next command: compact if the next turn would not fit.
            await compact_if_needed(self, name, sink=sink, busy=busy)
            return outcome

        async def on_cancel(reason: str) -> None:
            turn = current.get("turn")
            number = getattr(turn, "current_turn", None)
            if turn is not None and number is not None:
                await turn._append(TurnFailed(turn=number, reason=reason))

        async def switch(alias: str) -> SessionInfo:
            session = await blocking(self.services.sessions.get, name)
            self.config_for(session.workspace_path).config.profile(alias)
            return await shielded(self.services.sessions.switch_profile, name, alias)

        async def compact(trigger: str) -> object:
            from kairox.compaction.pipeline import run_compaction

            session = await blocking(self.services.sessions.get, name)
            return await run_compaction(self, session, trigger=trigger, sink=sink)

        async def lease() -> Callable[[], Awaitable[None]]:
            session = await blocking(self.services.sessions.get, name)
            await blocking(
                self.services.sessions.acquire_lease,
                session.id,
                self._holder,
                wait_s=self.lease_wait_s,
            )
            renewing = asyncio.create_task(self._renew(session.id))

            async def release() -> None:
                renewing.cancel()
                await shielded(self.services.sessions.release_lease, session.id, self._holder)

            return release

        return Handlers(send=send, compact=compact, switch=switch, on_cancel=on_cancel, lease=lease)

    async def _renew(self, session_id: str) -> None:
        while True:
            await asyncio.sleep(10)
            await blocking(self.services.sessions.renew_lease, session_id, self._holder)

    async def _build_turn(self, name: str, sink: Sink) -> Turn:
        session = await blocking(self.services.sessions.get, name)
        loaded = self.config_for(session.workspace_path)
        resolved = self.profile_for(session)
        tokenizer = self.tokenizer_for(resolved.model)
        budget = resolve_window(
            resolved.model,
            context_window=resolved.config.context_window,
            headroom=resolved.config.headroom,
        )
        retrieval = loaded.config.retrieval
        assembler = ContextAssembler(
            tokenizer,
            budget,
            quotas=Quotas(
                memory=retrieval.memory_quota,
                workspace=retrieval.workspace_quota,
                knowledge_base=retrieval.knowledge_base_quota,
            ),
        )
        bindings, search_fn = self.sources.bindings(loaded, Path(session.workspace_path))
        provider = self.provider(resolved.model, resolved.config, window=budget.window)
        return Turn(
            TurnDeps(
                services=self.services,
                session_id=session.id,
                workspace_id=session.workspace_id,
                profile_alias=resolved.alias,
                instructions=resolved.config.instructions,
                provider=provider,
                tokenizer=tokenizer,
                assembler=assembler,
                retriever=TurnRetriever(
                    bindings, max_results=retrieval.max_results, min_score=retrieval.min_score
                ),
                tools=BuiltinTools(Path(session.workspace_path), search_fn),
                max_output_tokens=resolved.config.max_output_tokens or budget.headroom,
                sink=sink,
            )
        )
