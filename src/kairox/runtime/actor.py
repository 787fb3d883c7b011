"""``SessionActor``: one task per session that runs its commands strictly one after another.

A command that arrives while a turn runs waits in the queue; ``Cancel`` alone acts at once, on the
running turn. Across processes, a lease row in the database gives the same one-at-a-time rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from kairox.core.errors import KairoxError
from kairox.core.outcomes import CompactionResult, Trigger, TurnOutcome
from kairox.core.types import SessionState
from kairox.store.records import SessionInfo

T = TypeVar("T")


def _future() -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()


@dataclass
class SendMessage:
    """Run one turn. ``started`` resolves, once the turn holds the session's lease, with the
    log's last seq: every later event of the session is this turn's (another process's turn,
    which held the lease before, is all at or below it)."""

    text: str
    future: asyncio.Future[TurnOutcome] = field(default_factory=_future)
    started: asyncio.Future[int] = field(default_factory=_future)


@dataclass
class Compact:
    trigger: Trigger = "manual"
    future: asyncio.Future[CompactionResult] = field(default_factory=_future)


@dataclass
class SwitchProfile:
    alias: str
    future: asyncio.Future[SessionInfo] = field(default_factory=_future)


@dataclass
class Run(Generic[T]):
    """Other work on the session's log that must not overlap a turn (recording an exchange an
    agent framework ran, a rewind): it runs in the queue and under the lease like a turn."""

    work: Callable[[], Awaitable[T]]
    future: asyncio.Future[T] = field(default_factory=_future)


@dataclass
class Cancel:
    reason: str = "cancelled by the user"


@dataclass
class Shutdown:
    future: asyncio.Future[None] = field(default_factory=_future)


Queued = SendMessage | Compact | SwitchProfile | Run[Any]
Command = Queued | Cancel | Shutdown
Release = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Handlers:
    """What the actor runs for each command; the engine provides it. ``on_cancel`` records a
    cancelled turn and returns its outcome."""

    send: Callable[[SendMessage], Awaitable[TurnOutcome]]
    compact: Callable[[Trigger], Awaitable[CompactionResult]]
    switch: Callable[[str], Awaitable[SessionInfo]]
    on_cancel: Callable[[str], Awaitable[TurnOutcome]]
    lease: Callable[[], Awaitable[Release]]


_STATE_FOR = {
    SendMessage: SessionState.RUNNING_TURN,
    Compact: SessionState.COMPACTING,
    SwitchProfile: SessionState.SWITCHING_PROFILE,
    Run: SessionState.RUNNING_TURN,
}


class SessionActor:
    def __init__(self, name: str, handlers: Handlers, *, max_queue: int = 32) -> None:
        self.name = name
        self._h = handlers
        self._queue: asyncio.Queue[Command] = asyncio.Queue(maxsize=max_queue)
        self._task: asyncio.Task[None] | None = None
        self._current: asyncio.Future[Any] | None = None
        self.state = SessionState.IDLE
        self.state_changes: list[SessionState] = []

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=f"session:{self.name}")

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    @overload
    async def submit(self, command: SendMessage) -> TurnOutcome: ...
    @overload
    async def submit(self, command: Compact) -> CompactionResult: ...
    @overload
    async def submit(self, command: SwitchProfile) -> SessionInfo: ...
    @overload
    async def submit(self, command: Run[T]) -> T: ...
    @overload
    async def submit(self, command: Cancel) -> bool: ...
    async def submit(self, command: Queued | Cancel) -> Any:
        """Queue a command and wait for its result. ``Cancel`` acts on the running turn now."""
        if isinstance(command, Cancel):
            return self.cancel(command.reason)
        self.start()
        await self._queue.put(command)
        return await command.future

    def cancel(self, reason: str = "cancelled by the user") -> bool:
        """Cancel the running turn, if a turn is running; True when one was."""
        if self._current is not None and self.state is SessionState.RUNNING_TURN:
            self._current.cancel(reason)
            return True
        return False

    @overload
    def enqueue(self, command: SendMessage) -> asyncio.Future[TurnOutcome]: ...
    @overload
    def enqueue(self, command: Compact) -> asyncio.Future[CompactionResult]: ...
    @overload
    def enqueue(self, command: SwitchProfile) -> asyncio.Future[SessionInfo]: ...
    def enqueue(
        self, command: Queued
    ) -> (
        asyncio.Future[TurnOutcome] | asyncio.Future[CompactionResult] | asyncio.Future[SessionInfo]
    ):
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
            self.set_state(_STATE_FOR[type(command)])
            match command:
                case SendMessage():
                    await self._run(
                        command.future, functools.partial(self._h.send, command), self._h.on_cancel
                    )
                case Compact(trigger=trigger):
                    await self._run(
                        command.future, lambda: self._h.compact(trigger), _compaction_cancelled
                    )
                case SwitchProfile(alias=alias):
                    await self._run(
                        command.future, lambda: self._h.switch(alias), _switch_cancelled
                    )
                case Run(work=work):
                    await self._run(command.future, work, _run_cancelled)

    async def _run(
        self,
        future: asyncio.Future[T],
        work: Callable[[], Awaitable[T]],
        on_cancel: Callable[[str], Awaitable[T]],
    ) -> None:
        """Run one command; its future resolves only after the lease is released and the
        actor is idle again, so a caller that awaited it sees the settled state."""
        release: Release | None = None
        result: T | None = None
        error: BaseException | None = None
        try:
            release = await self._h.lease()
            current: asyncio.Future[T] = asyncio.ensure_future(_coro(work))
            self._current = current
            try:
                result = await asyncio.shield(current)
            except asyncio.CancelledError:
                if not current.cancelled():
                    # The actor itself is cancelled (the process is ending and asyncio cancels
                    # every task): the work ends the same way a cancelled command does, so a
                    # turn still closes with TurnFailed before the lease is released.
                    await _settle(current, on_cancel)
                    raise
                result = await on_cancel(_cancel_reason(current))
        except Exception as exc:
            error = exc
        finally:
            self._current = None
            if release is not None:
                with contextlib.suppress(Exception):
                    await release()
            self.set_state(SessionState.IDLE)
            if not future.done():
                if error is not None or result is None:
                    future.set_exception(error or RuntimeError("the command returned no result"))
                else:
                    future.set_result(result)

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


async def _settle(current: asyncio.Future[T], on_cancel: Callable[[str], Awaitable[T]]) -> None:
    current.cancel("shutting down")
    with contextlib.suppress(BaseException):
        await current
    if current.cancelled():
        with contextlib.suppress(Exception):
            await on_cancel("shutting down")


async def _coro(work: Callable[[], Awaitable[T]]) -> T:
    return await work()


async def _compaction_cancelled(reason: str) -> CompactionResult:
    return CompactionResult("failed", "manual", reason=f"compaction cancelled: {reason}")


async def _run_cancelled(reason: str) -> Any:
    raise KairoxError(f"cancelled: {reason}")


async def _switch_cancelled(reason: str) -> SessionInfo:
    raise KairoxError(f"the profile switch was cancelled: {reason}")


def _cancel_reason(task: asyncio.Future[Any]) -> str:
    try:
        task.result()
    except asyncio.CancelledError as exc:
        return str(exc.args[0]) if exc.args else "cancelled"
    return "cancelled"
