"""What one command needs, resolved once: the profile, model, window and budget, the quotas, the
tokenizer, the prompt frame, and (on first use) the reply and summary providers.

The engine resolves a ``CommandSetup`` when the actor takes a command and passes that one value
to the turn and to compaction, so no layer re-derives the same facts from the config.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kairox.compaction.summariser import SummaryModel
from kairox.compaction.target import CompactionTarget
from kairox.context.assembler import ContextAssembler, Quotas
from kairox.context.tokens import Tokenizer, TokenizerRegistry
from kairox.context.windows import Budget, resolve_window
from kairox.core.config import ExtractMode, KairoxConfig, ProfileConfig
from kairox.core.config_load import ConfigCache, LoadedConfig
from kairox.core.errors import InvalidInput
from kairox.models import ModelProvider, ProviderSettings, create_provider, describe
from kairox.models.catalog import local_model_of
from kairox.runtime.prompts import PromptKind, build_system_prompt
from kairox.runtime.tools import tool_schema_tokens
from kairox.services import Services
from kairox.store.records import SessionInfo


class ProviderCache:
    """One provider per model, endpoint and window for the process, closed on shutdown.

    ``pinned`` is a provider instance the caller handed the facade: every request for its spec
    gets it, and the caller, who made it, closes it. ``home`` is where ``local`` finds pulled
    models."""

    def __init__(self, pinned: ModelProvider | None = None, *, home: Path | None = None) -> None:
        self._providers: dict[str, ModelProvider] = {}
        self._pinned = pinned
        self._home = home

    def get(self, model: str, profile: ProfileConfig, *, window: int) -> ModelProvider:
        if self._pinned is not None and model == self._pinned.spec:
            return self._pinned
        key = f"{model}|{profile.base_url}|{profile.api_key_env}|{window}"
        if key not in self._providers:
            settings = ProviderSettings(
                base_url=profile.base_url,
                api_key_env=profile.api_key_env,
                timeout_s=profile.timeout_s,
                n_ctx=window,
                home=str(self._home) if self._home is not None else None,
            )
            self._providers[key] = create_provider(model, settings=settings)
        return self._providers[key]

    @property
    def home(self) -> Path | None:
        return self._home

    async def aclose(self) -> None:
        for provider in self._providers.values():
            await provider.aclose()


@dataclass(frozen=True)
class Resolver:
    """The per-process caches a setup is resolved from; the facade shares the config cache and
    the tokenizer registry with its other areas."""

    configs: ConfigCache
    tokenizers: TokenizerRegistry
    providers: ProviderCache
    model_override: str | None = None

    def resolve(self, session: SessionInfo) -> CommandSetup:
        loaded = self.configs.get(session.workspace_path)
        profile = loaded.config.profile(session.profile)
        model = self.model_override or profile.model
        budget = budget_for(loaded, session.profile, model)
        retrieval = loaded.config.retrieval
        return CommandSetup(
            session=session,
            loaded=loaded,
            profile_alias=session.profile,
            profile=profile,
            model=model,
            budget=budget,
            quotas=Quotas(
                memory=retrieval.memory_quota,
                workspace=retrieval.workspace_quota,
                knowledge_base=retrieval.knowledge_base_quota,
                recall=loaded.config.recall.quota,
            ),
            tokenizer=self.tokenizers.for_model(model),
            system_prompt=build_system_prompt("", kind=prompt_kind(model, self.providers.home)),
            resolver=self,
        )

    def profile_provider(self, workspace: str | Path, alias: str | None = None) -> ModelProvider:
        """The provider a turn with profile ``alias`` (default: the workspace's) will use; built
        once per process and kept, so an embedded model is loaded once."""
        loaded = self.configs.get(workspace)
        name = alias or loaded.config.default_profile
        profile = loaded.config.profile(name)
        model = self.model_override or profile.model
        budget = budget_for(loaded, name, model)
        return self.providers.get(model, profile, window=budget.window)

    def for_preview(
        self, setup: CommandSetup, model: str | None, budget: int | None
    ) -> CommandSetup:
        """``setup`` for a model call of the caller's own: ``model`` (a spec) replaces the
        session's model, with that model's window; ``budget`` (prompt tokens) the budget."""
        spec = model or setup.model
        window = setup.budget
        if model is not None and model != setup.model:
            window = resolve_window(spec)
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
                raise InvalidInput(f"budget must be a positive number of tokens, got {budget!r}")
            window = Budget(
                window=budget + window.headroom,
                headroom=window.headroom,
                budget=budget,
                window_source="config",
            )
        return replace(
            setup,
            model=spec,
            budget=window,
            tokenizer=self.tokenizers.for_model(spec),
            system_prompt=build_system_prompt("", kind=prompt_kind(spec, self.providers.home)),
        )

    def model_of(self, session: SessionInfo) -> str:
        """The model spec the session's next turn uses (``--model`` wins over the profile)."""
        profile = self.configs.get(session.workspace_path).config.profile(session.profile)
        return self.model_override or profile.model


def budget_for(loaded: LoadedConfig, alias: str, model: str) -> Budget:
    """The window and headroom of profile ``alias`` running ``model``. A built-in profile's values
    describe its built-in model: a different model (``--model``) gets its own window from
    ``resolve_window``, unless a config file set the profile's values."""
    profile = loaded.config.profile(alias)
    own = model == profile.model

    def value(key: str, configured: int | None) -> int | None:
        return configured if own or loaded.set_by_user(f"profiles.{alias}.{key}") else None

    return resolve_window(
        model,
        context_window=value("context_window", profile.context_window),
        headroom=value("headroom", profile.headroom),
        profile=alias,
    )


def prompt_kind(model: str, home: Path | None = None) -> PromptKind:
    """The prompt the backend declared (``kairox.models.register``). A backend that asks for
    the ``local`` prompt gets the short one when the catalog says its model (the demo model)
    follows only that."""
    declared = describe(model).prompt
    if declared != "local":
        return declared
    local = local_model_of(model, home)
    return "short" if local is not None and local.protocol == "short" else "local"


@dataclass(frozen=True)
class CommandSetup:
    """One command's settings. ``provider`` and ``summary_model`` are built on first use (they
    may fail, and a compaction can go on without the reply provider)."""

    session: SessionInfo
    loaded: LoadedConfig
    profile_alias: str
    profile: ProfileConfig
    model: str
    budget: Budget
    quotas: Quotas
    tokenizer: Tokenizer
    system_prompt: str
    resolver: Resolver

    @property
    def config(self) -> KairoxConfig:
        return self.loaded.config

    @property
    def workspace(self) -> Path:
        return Path(self.session.workspace_path)

    @property
    def extract_mode(self) -> ExtractMode:
        """``[profiles.NAME] extract``, else ``[memory] extract``."""
        return self.profile.extract or self.config.memory.extract

    @property
    def max_output_tokens(self) -> int:
        return self.profile.max_output_tokens or self.budget.headroom

    def provider(self) -> ModelProvider:
        return self.resolver.providers.get(self.model, self.profile, window=self.budget.window)

    @property
    def tool_tokens(self) -> int:
        """What the tool definitions sent with every reply request cost in this tokenizer (0
        for a backend that sends none). A provider instance handed to the facade may carry a
        spec whose prefix is not registered: it is read by its prefix, never parsed."""
        if not describe(self.model).sends_tool_definitions:
            return 0
        return tool_schema_tokens(self.tokenizer)

    def assembler(self) -> ContextAssembler:
        return ContextAssembler(
            self.tokenizer, self.budget, quotas=self.quotas, tool_tokens=self.tool_tokens
        )

    def summary_model(self) -> SummaryModel:
        """The profile's ``summary_profile``, or the session's profile itself. A model override
        (``--model``) replaces the model of both, as it does for replies."""
        alias = self.profile.summary_profile or self.profile_alias
        profile = self.config.profile(alias)
        model = self.resolver.model_override or profile.model
        budget = budget_for(self.loaded, alias, model)
        return SummaryModel(
            alias=alias,
            provider=self.resolver.providers.get(model, profile, window=budget.window),
            tokenizer=self.resolver.tokenizers.for_model(model),
            budget=budget,
        )

    def compaction_target(self, services: Services) -> CompactionTarget:
        """The session as its next turn will see it (the same profile, budget and quotas)."""
        return CompactionTarget(
            events=services.events,
            memories=services.memories,
            clock=services.clock,
            session_id=self.session.id,
            workspace_id=self.session.workspace_id,
            tokenizer=self.tokenizer,
            budget=self.budget,
            quotas=self.quotas,
            system_prompt=self.system_prompt,
            instructions=self.profile.instructions,
            model=self.model,
            config=self.config.compaction,
            tool_tokens=self.tool_tokens,
        )
