"""``AppFacade``: the one async API every surface uses. It delegates to per-area services.

The facade owns the per-process caches: one config cache, one tokenizer registry and one
retrieval ``SourceCache``, shared by every area and by the runtime. Areas are built on first use;
the runtime (model providers, session actors) loads with ``facade.chat``, so a command that never
talks to a model starts without it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from kairox.core.backends import BackendTraits
from kairox.core.clock import Clock
from kairox.core.config_load import ConfigCache, LoadedConfig
from kairox.services import Services

if TYPE_CHECKING:
    from kairox.app.chat import ChatArea
    from kairox.app.context import ContextArea
    from kairox.app.events import EventsArea
    from kairox.app.memory import MemoryArea
    from kairox.app.models import ModelsArea
    from kairox.app.retrieval import RetrievalArea
    from kairox.app.sessions import SessionsArea
    from kairox.app.tokens import TokensArea
    from kairox.app.trust import TrustArea
    from kairox.context.tokens import TokenizerRegistry
    from kairox.models.base import ModelProvider
    from kairox.retrieval.sources import SourceCache
    from kairox.runtime.engine import Engine


def describe_model(spec: str) -> BackendTraits:
    """What the model backend of ``spec`` declared itself to be, for the trust check of a
    workspace config. The model registry loads on the first call, so a listing never loads it."""
    from kairox.models.registry import describe

    return describe(spec)


class AppFacade:
    """Each area is built on first use, so a command loads only what it calls.

    ``model`` overrides every profile's model, like ``--model``: a spec string
    (``openai:gpt-4o-mini``) or a ``ModelProvider`` instance of your own (Kairox does not close
    an instance it was handed; its ``spec`` names it in traces and picks its tokenizer).
    """

    def __init__(
        self,
        services: Services,
        *,
        model: str | ModelProvider | None = None,
        lease_wait_s: float = 0.0,
    ) -> None:
        self.services = services
        self.configs = ConfigCache(services.home, describe=describe_model)
        self._model = model
        self._lease_wait_s = lease_wait_s
        self._chat: ChatArea | None = None

    @cached_property
    def tokenizers(self) -> TokenizerRegistry:
        from kairox.context.tokens import TokenizerRegistry

        return TokenizerRegistry()

    @cached_property
    def sources(self) -> SourceCache:
        from kairox.retrieval.sources import SourceCache

        return SourceCache(
            lambda: self.services.chunks,
            lambda: (self.services.history, self.services.events),
            lambda: (self.services.memory_index, self.services.memories),
        )

    @cached_property
    def memory(self) -> MemoryArea:
        from kairox.app.memory import MemoryArea

        return MemoryArea(self.services, self.configs, self.sources, lambda: self.engine)

    @cached_property
    def models(self) -> ModelsArea:
        """Local GGUF models: known, pulled, pull and remove."""
        from kairox.app.models import ModelsArea

        return ModelsArea(self.services.home)

    @cached_property
    def events(self) -> EventsArea:
        from kairox.app.events import EventsArea

        return EventsArea(self.services)

    @cached_property
    def sessions(self) -> SessionsArea:
        from kairox.app.sessions import SessionsArea

        return SessionsArea(self.services, lambda: self.chat)

    @cached_property
    def tokens(self) -> TokensArea:
        from kairox.app.tokens import TokensArea

        return TokensArea(self.services)

    @cached_property
    def trust(self) -> TrustArea:
        from kairox.app.trust import TrustArea

        return TrustArea(self.services.home, self.configs)

    @cached_property
    def context(self) -> ContextArea:
        from kairox.app.context import ContextArea

        return ContextArea(self.services, self.tokenizers)

    @cached_property
    def retrieval(self) -> RetrievalArea:
        from kairox.app.retrieval import RetrievalArea

        return RetrievalArea(self.services, self.configs, self.sources)

    @classmethod
    def open(
        cls,
        home: str | Path | None = None,
        *,
        clock: Clock | None = None,
        model: str | ModelProvider | None = None,
        lease_wait_s: float = 0.0,
    ) -> AppFacade:
        return cls(Services.open(home, clock=clock), model=model, lease_wait_s=lease_wait_s)

    @cached_property
    def engine(self) -> Engine:
        """The runtime (session actors, model providers); built on first use."""
        from kairox.runtime.engine import Engine

        return Engine(
            self.services,
            configs=self.configs,
            tokenizers=self.tokenizers,
            sources=self.sources,
            model_override=self._model,
            lease_wait_s=self._lease_wait_s,
        )

    @property
    def chat(self) -> ChatArea:
        """Sessions that talk to a model; built on first use (it loads the runtime)."""
        if self._chat is None:
            from kairox.app.chat import ChatArea

            self._chat = ChatArea(self.engine)
        return self._chat

    def config(self, workspace: str | Path) -> LoadedConfig:
        """The layered config of ``workspace`` (defaults, user file, workspace file, environment),
        from the process's one cache; reloaded when a file changes. Raises ``ConfigError``."""
        return self.configs.get(workspace)

    async def aclose(self) -> None:
        if "engine" in self.__dict__:
            await self.engine.shutdown()

    @property
    def home(self) -> Path:
        return self.services.home

    def close(self) -> None:
        self.services.close()

    def __enter__(self) -> AppFacade:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
