"""The runtime's side of compaction: when to compact, with which summary model, and one at a time.

The actor runs ``before_turn`` and ``after_turn`` around each turn and ``compact`` for a manual
request; each builds the plain inputs ``kairox.compaction.run_compaction`` takes from the
command's ``CommandSetup``. Automatic compaction never raises: a failure is recorded as
``ContextCompactionFailed`` and the turn goes on under the budget guard.
"""

from __future__ import annotations

from collections.abc import Callable

from kairox.compaction.pipeline import SummaryUnavailable, run_compaction
from kairox.compaction.policy import project, window_changed
from kairox.compaction.summariser import SummaryModel
from kairox.compaction.target import CompactionTarget
from kairox.core.aio import blocking, shielded
from kairox.core.events import (
    ContextCompactionFailed,
    ContextCompactionSkipped,
    EventPayload,
    StoredEvent,
)
from kairox.core.outcomes import CompactionResult, Trigger
from kairox.runtime.setup import CommandSetup
from kairox.services import Services

Busy = Callable[[bool], None]

ALREADY_RUNNING = "a compaction is already running for this session"


class Compactor:
    def __init__(self, services: Services) -> None:
        self.services = services
        self._running: set[str] = set()

    async def compact(
        self, setup: CommandSetup, *, trigger: Trigger, prompt: str | None = None
    ) -> CompactionResult:
        """Compact one layer of the session now."""
        target = setup.compaction_target(self.services)

        async def append(payload: EventPayload) -> StoredEvent:
            event = await shielded(
                target.events.append,
                payload,
                session_id=target.session_id,
                workspace_id=target.workspace_id,
                counter=target.tokenizer,
            )
            return event

        if target.session_id in self._running:
            await append(ContextCompactionSkipped(reason=ALREADY_RUNNING))
            return CompactionResult("skipped", trigger, reason=ALREADY_RUNNING)
        self._running.add(target.session_id)
        try:
            return await run_compaction(
                target, _summary_model(setup), append, trigger=trigger, prompt=prompt
            )
        finally:
            self._running.discard(target.session_id)

    async def before_turn(
        self, setup: CommandSetup, prompt: str, *, busy: Busy
    ) -> list[CompactionResult]:
        """After a switch to a smaller window, compact first if the prompt would not fit."""
        return await self._while_due(setup, busy=busy, prompt=prompt)

    async def after_turn(self, setup: CommandSetup, *, busy: Busy) -> list[CompactionResult]:
        """Before the actor takes the next command: compact while the next turn would not fit."""
        return await self._while_due(setup, busy=busy)

    async def _while_due(
        self, setup: CommandSetup, *, busy: Busy, prompt: str | None = None
    ) -> list[CompactionResult]:
        """Compact while the next turn would not fit, at most ``max_rounds`` layers. Before a turn
        (``prompt`` given) only when the window changed since the last assembly."""
        results: list[CompactionResult] = []
        try:
            target = setup.compaction_target(self.services)
            if prompt is not None and not await blocking(window_changed, target):
                return results
            for _round in range(target.config.max_rounds):
                if not await _due(target, prompt):
                    break
                busy(True)
                try:
                    result = await self.compact(setup, trigger="auto", prompt=prompt)
                finally:
                    busy(False)
                results.append(result)
                if result.outcome not in ("summarised", "fallback"):
                    break
        except Exception as exc:
            await shielded(
                self.services.events.append,
                ContextCompactionFailed(reason=f"automatic compaction failed: {exc}"),
                session_id=setup.session.id,
                workspace_id=setup.session.workspace_id,
            )
        return results


async def _due(target: CompactionTarget, prompt: str | None) -> bool:
    projection = await blocking(project, target, prompt=prompt)
    return projection.due


def _summary_model(setup: CommandSetup) -> SummaryModel | SummaryUnavailable:
    try:
        return setup.summary_model()
    except Exception as exc:  # a broken summary profile must not block compaction
        return SummaryUnavailable(str(exc))
