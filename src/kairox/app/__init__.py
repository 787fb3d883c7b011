"""``AppFacade``: the one async API every surface uses. It delegates to per-area services."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from kairox.app.events import EventsArea
from kairox.app.memory import MemoryArea
from kairox.app.services import Services
from kairox.app.sessions import SessionsArea
from kairox.core.clock import Clock


class AppFacade:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.memory = MemoryArea(services)
        self.events = EventsArea(services)
        self.sessions = SessionsArea(services)

    @classmethod
    def open(cls, home: str | Path | None = None, *, clock: Clock | None = None) -> AppFacade:
        return cls(Services.open(home, clock=clock))

    @property
    def home(self) -> Path:
        return self.services.home

    def close(self) -> None:
        self.services.close()

    def __enter__(self) -> AppFacade:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


__all__ = ["AppFacade"]
