"""The actor's own task cancelled (asyncio cancels every task when a process ends on SIGTERM):
the running turn is cancelled and recorded through ``on_cancel`` before the lease is released."""

from __future__ import annotations

import asyncio

from kairox.core.outcomes import TurnOutcome
from kairox.runtime.actor import Handlers, SendMessage, SessionActor


async def test_cancelling_the_actor_settles_the_running_turn() -> None:
    log: list[str] = []
    started = asyncio.Event()

    async def send(command: SendMessage) -> TurnOutcome:
        started.set()
        await asyncio.Event().wait()  # a model that hangs
        raise AssertionError("unreachable")

    async def on_cancel(reason: str) -> TurnOutcome:
        log.append(f"turn failed: {reason}")
        return TurnOutcome(turn=1, failure=reason)

    async def lease() -> object:
        log.append("lease")

        async def release() -> None:
            log.append("released")

        return release

    async def unused(*_: object) -> object:
        raise AssertionError("not called")

    actor = SessionActor(
        "s",
        Handlers(send=send, compact=unused, switch=unused, on_cancel=on_cancel, lease=lease),  # type: ignore[arg-type]
    )
    future = actor.enqueue(SendMessage("hello"))
    await started.wait()
    assert actor._task is not None
    actor._task.cancel()  # what asyncio.run does to every task left at exit
    await asyncio.gather(actor._task, return_exceptions=True)
    assert log == ["lease", "turn failed: shutting down", "released"]
    assert future.done() and future.exception() is not None
