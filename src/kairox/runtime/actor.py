"""``SessionActor``: one task per session that runs its commands strictly one after another.

A command that arrives while a turn runs waits in the queue; ``Cancel`` alone acts at once, on the
running turn. Across processes, a lease row in the database gives the same one-at-a-time rule.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kairox.core.types import SessionState


@dataclass
class SendMessage:
    text: str
    future: asyncio.Future[Any] = field(default_factory=lambda: _future())


@dataclass
class Compact:
    trigger: str = "manual"
    future: asyncio.Future[Any] = field(default_factory=lambda: _future())


@dataclass
class SwitchProfile:
    alias: str
    future: asyncio.Future[Any] = field(default_factory=lambda: _future())


@dataclass
class Cancel:
    reason: str = "cancelled by the user"


@dataclass
class Shutdown:
    future: asyncio.Future[Any] = field(default_factory=lambda: _future())


Command = SendMessage | Compact | SwitchProfile | Cancel | Shutdown


def _future() -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()


class Handlers:
    """What the actor runs for each command; the engine provides it."""

    def __init__(
        self,
        send: Callable[[str], Awaitable[Any]],
        compact: Callable[[str], Awaitable[Any]],
        switch: Callable[[str], Awaitable[Any]],
        on_cancel: Callable[[str], Awaitable[None]],
        lease: Callable[[], Awaitable[Callable[[], Awaitable[None]]]],
    ) -> None:
        self.send = send
        self.compact = compact
        self.switch = switch
        self.on_cancel = on_cancel
        self.lease = lease


_STATE_FOR = {
    SendMessage: SessionState.RUNNING_TURN,
    Compact: SessionState.COMPACTING,
    SwitchProfile: SessionState.SWITCHING_PROFILE,
}


class SessionActor:
    def __init__(self, name: str, handlers: Handlers, *, max_queue: int = 32) -> None:
        self.name = name
        self._h = handlers
        self._queue: asyncio.Queue[Command] = asyncio.Queue(maxsize=max_queue)
        self._task: asyncio.Task[None] | None = None
        self._current: asyncio.Task[Any] | None = None
        self.state = SessionState.IDLE
        self.state_changes: list[SessionState] = []

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=f"session:{self.name}")

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    async def submit(self, command: Command) -> Any:
        """Queue a command and wait for its result. ``Cancel`` acts on the running turn now."""
        self.start()
        if isinstance(command, Cancel):
            if self._current is not None and self.state is SessionState.RUNNING_TURN:
                self._current.cancel(command.reason)
                return True
            return False
        await self._queue.put(command)
        return await command.future

    def enqueue(self, command: SendMessage | Compact | SwitchProfile) -> asyncio.Future[Any]:
        """Queue without waiting; the returned future resolves when the command has run."""
        self.start()
        self._queue.put_nowait(command)
        return command.future

    async def _loop(self) -> None:
        while True:
            command = await self._queue.get()
            if isinstance(command, Shutdown):
                command.future.set_result(None)
                return
            assert not isinstance(command, Cancel)
            await self._run(command)

    async def _run(self, command: SendMessage | Compact | SwitchProfile) -> None:
        """Run one command; its future resolves only after the lease is released and the
        actor is idle again, so a caller that awaited it sees the settled state."""
        self.set_state(_STATE_FOR[type(command)])
        release: Callable[[], Awaitable[None]] | None = None
        result: Any = None
        error: BaseException | None = None
        try:
            release = await self._h.lease()
            if isinstance(command, SendMessage):
                work = self._h.send(command.text)
            elif isinstance(command, Compact):
                work = self._h.compact(command.trigger)
            else:
                work = self._h.switch(command.alias)
            self._current = asyncio.ensure_future(work)
            try:
                result = await asyncio.shield(self._current)
            except asyncio.CancelledError:
                if not self._current.cancelled():
                    raise
                await self._h.on_cancel(_cancel_reason(self._current))
        except Exception as exc:
            error = exc
        finally:
            self._current = None
            if release is not None:
                with contextlib.suppress(Exception):
                    await release()
            self.set_state(SessionState.IDLE)
            if not command.future.done():
                if error is not None:
                    command.future.set_exception(error)
                else:
                    command.future.set_result(result)

    def set_state(self, state: SessionState) -> None:
        """Record the state; the engine marks a turn's automatic compaction this way."""
        self.state = state
        self.state_changes.append(state)

    async def shutdown(self) -> None:
        if self._task is None:
            return
        if self._current is not None:
            self._current.cancel("shutting down")
        stop = Shutdown()
        await self._queue.put(stop)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


def _cancel_reason(task: asyncio.Task[Any] | asyncio.Future[Any]) -> str:
    try:
        task.result()
    except asyncio.CancelledError as exc:
        return str(exc.args[0]) if exc.args else "cancelled"
    return "cancelled"
