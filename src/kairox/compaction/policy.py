"""When to compact: does the next turn still fit under ``threshold x budget``?

The check is cheap enough to run after every turn: the fixed part of the next request comes from a
dry run of the assembler with no history, and the history side from cached token counts, read
newest first and only until the limit is passed, so its cost does not grow with the session.
"""

from __future__ import annotations

from dataclasses import dataclass

from kairox.compaction.target import CompactionTarget
from kairox.context.history import load_history
from kairox.core.errors import ContextOverflow
from kairox.core.events import ContextAssembled, UserMessageAdded


@dataclass(frozen=True, slots=True)
class Projection:
    """What the next turn is expected to need.

    ``base`` is the system prompt, instructions, memory block, prompt and reply priming (exact,
    from a dry run); ``history`` is the visible history (summaries included), read only until the
    total passes ``limit``; retrieval hits are left out (the threshold leaves room for them).
    """

    base: int
    history: int
    limit: int

    @property
    def total(self) -> int:
        return self.base + self.history

    @property
    def fits(self) -> bool:
        return self.total <= self.limit

    @property
    def due(self) -> bool:
        """Compaction is due: the turn would not fit, and there is history to shrink."""
        return not self.fits and self.history > 0


def next_prompt_estimate(target: CompactionTarget) -> str:
    """The next prompt is unknown at the end of a turn; the latest one stands in for it."""
    latest = target.latest("UserMessageAdded")
    if latest is not None and isinstance(latest.payload, UserMessageAdded):
        return latest.payload.text
    return ""


def project(target: CompactionTarget, *, prompt: str | None = None) -> Projection:
    """Project the next turn's size; ``prompt`` defaults to ``next_prompt_estimate``."""
    text = next_prompt_estimate(target) if prompt is None else prompt
    try:
        base = target.dry_run([], prompt=text).trace.used
    except ContextOverflow as exc:
        # A given prompt that cannot fit will be refused by the budget guard; a latest prompt
        # that was refused as too long says nothing about the next one.
        base = exc.required if prompt is not None else target.dry_run([], prompt="").trace.used
    room = max(0, target.limit - base)
    items = load_history(target.events, target.session_id, target.tokenizer, max_tokens=room)
    return Projection(base=base, history=sum(i.tokens for i in items), limit=target.limit)


def window_changed(target: CompactionTarget) -> bool:
    """True when the last assembly used another budget or tokenizer (a profile switch since)."""
    last = target.latest("ContextAssembled")
    if last is None or not isinstance(last.payload, ContextAssembled):
        return False
    trace = last.payload
    return trace.budget != target.budget.budget or trace.tokenizer != target.tokenizer.name
