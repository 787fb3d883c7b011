"""``AppFacade``: the one async API every surface uses. It delegates to per-area services."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from kairox.app.context import ContextArea
from kairox.app.events import EventsArea
from kairox.app.memory import MemoryArea
from kairox.app.retrieval import RetrievalArea
from kairox.app.sessions import SessionsArea
from kairox.app.trust import TrustArea
from kairox.core.clock import Clock
from kairox.runtime.services import Services

if TYPE_CHECKING:
    from kairox.app.chat import ChatArea


class AppFacade:
    def __init__(
        self, services: Services, *, model: str | None = None, lease_wait_s: float = 0.0
    ) -> None:
        self.services = services
        self.memory = MemoryArea(services)
        self.events = EventsArea(services)
        self.sessions = SessionsArea(services)
        self.context = ContextArea(services)
        self.retrieval = RetrievalArea(services)
        self.trust = TrustArea(services.home)
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
                Engine(self.services, model_override=self._model, lease_wait_s=self._lease_wait_s)
            )
        return self._chat

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


__all__ = ["AppFacade"]
