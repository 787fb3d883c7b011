"""``AppFacade``: the one async API every surface uses. It delegates to per-area services.

Surfaces import this package (and ``kairox.core``) only: it re-exports every type its methods
return, so no surface reaches into the runtime or the store. The runtime (model providers, the
session actors) loads on the first use of ``facade.chat``, so commands that never talk to a model
start without it. The facade owns the per-process caches: one config cache, one tokenizer
registry and one retrieval ``SourceCache``, shared by every area and the runtime.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from kairox.app.context import ContextArea
from kairox.app.events import EventsArea
from kairox.app.exports import (
    AddReport,
    ChatMessage,
    ChatUpdate,
    ChunksEmbedded,
    CompactionResult,
    CompactionSummary,
    ContextAssembled,
    FileProcessed,
    ImportReport,
    IndexEvent,
    IndexReport,
    KnowledgeBaseInfo,
    LoadedConfig,
    ProgressCallback,
    RetrievalHit,
    SessionInfo,
    TransferFormat,
    TurnDone,
    TurnOutcome,
    WalkFinished,
    bar_chart,
    trace_json,
)
from kairox.app.memory import MemoryArea
from kairox.app.retrieval import RetrievalArea
from kairox.app.sessions import SessionsArea
from kairox.context.tokens import TokenizerRegistry
from kairox.core.clock import Clock
from kairox.core.config_load import ConfigCache
from kairox.retrieval.sources import SourceCache
from kairox.services import Services

if TYPE_CHECKING:
    from kairox.app.chat import ChatArea


class AppFacade:
    def __init__(
        self, services: Services, *, model: str | None = None, lease_wait_s: float = 0.0
    ) -> None:
        self.services = services
        self.configs = ConfigCache()
        self.tokenizers = TokenizerRegistry()
        self.sources = SourceCache(services.db)
        self.memory = MemoryArea(services)
        self.events = EventsArea(services)
        self.sessions = SessionsArea(services)
        self.context = ContextArea(services, self.tokenizers)
        self.retrieval = RetrievalArea(services, self.configs, self.sources)
        self._model = model
        self._lease_wait_s = lease_wait_s
        self._chat: ChatArea | None = None

    @classmethod
    def open(
        cls,
        home: str | Path | None = None,
        *,
        clock: Clock | None = None,
        model: str | None = None,
        lease_wait_s: float = 0.0,
    ) -> AppFacade:
        return cls(Services.open(home, clock=clock), model=model, lease_wait_s=lease_wait_s)

    @property
    def chat(self) -> ChatArea:
        """Sessions that talk to a model; built on first use (it loads the runtime)."""
        if self._chat is None:
            from kairox.app.chat import ChatArea
            from kairox.runtime.engine import Engine

            self._chat = ChatArea(
                Engine(
                    self.services,
                    configs=self.configs,
                    tokenizers=self.tokenizers,
                    sources=self.sources,
                    model_override=self._model,
                    lease_wait_s=self._lease_wait_s,
                )
            )
        return self._chat

    def config(self, workspace: str | Path) -> LoadedConfig:
        """The layered config of ``workspace`` (defaults, user file, workspace file, environment),
        from the process's one cache; reloaded when a file changes. Raises ``ConfigError``."""
        return self.configs.get(workspace)

    async def aclose(self) -> None:
        if self._chat is not None:
            await self._chat._engine.shutdown()

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


__all__ = [
    "AddReport",
    "AppFacade",
    "ChatMessage",
    "ChatUpdate",
    "ChunksEmbedded",
    "CompactionResult",
    "CompactionSummary",
    "ContextAssembled",
    "FileProcessed",
    "ImportReport",
    "IndexEvent",
    "IndexReport",
    "KnowledgeBaseInfo",
    "LoadedConfig",
    "ProgressCallback",
    "RetrievalHit",
    "SessionInfo",
    "TransferFormat",
    "TurnDone",
    "TurnOutcome",
    "WalkFinished",
    "bar_chart",
    "trace_json",
]
