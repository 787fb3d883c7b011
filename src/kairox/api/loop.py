"""One event loop on a background thread, for the sync faces of async APIs (``Memory``, the
LangGraph store's ``batch``): each call runs there, so it works from plain code and from inside
a running loop alike, and what the facade starts keeps one loop for its whole life."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from kairox.core.errors import InvalidInput

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str, *, owner: str) -> None:
        self._owner = owner  # names the object in "closed" errors
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and return its result (its exception is raised here)."""
        if self._loop.is_closed():
            coro.close()
            raise InvalidInput(f"this {self._owner} is closed; open a new one")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on this loop from another loop: what it starts (session actors)
        lives on one loop, whichever loops the callers come from."""
        if self._loop.is_closed():
            coro.close()
            raise InvalidInput(f"this {self._owner} is closed; open a new one")
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    def stop(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
