"""The compaction pipeline that automatic and manual compaction share.

``run_compaction`` appends ``ContextCompactionStarted``, then ``CompactionSummary`` and
``ContextCompactionCompleted``; a model failure (after bounded retries with back-off) or a rejected
summary appends ``ContextCompactionFailed`` and then a deterministic fallback summary. It appends
``ContextCompactionSkipped`` alone when compaction is disabled, already running, or has nothing to
do. ``compact_if_needed`` is the automatic trigger the session actor runs around turns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from weakref import WeakKeyDictionary

from kairox.compaction.layers import Layer, choose_layer, previous_summary
from kairox.compaction.policy import project, window_changed
from kairox.compaction.summariser import (
    SUMMARY_INSTRUCTIONS,
    Append,
    SummaryFailed,
    SummaryModel,
    call_summary_model,
    resolve_summary_model,
)
from kairox.compaction.target import CompactionTarget
from kairox.compaction.verify import Candidate, candidate, fallback, verify
from kairox.context.assembler import Quotas
from kairox.context.windows import resolve_window
from kairox.core.aio import blocking, shielded
from kairox.core.events import (
    CompactionSummary,
    ContextCompactionCompleted,
    ContextCompactionFailed,
    ContextCompactionSkipped,
    ContextCompactionStarted,
    EventPayload,
    StoredEvent,
)
from kairox.runtime.prompts import build_system_prompt

if TYPE_CHECKING:
    from kairox.runtime.engine import Engine
    from kairox.store.sessions import SessionInfo

Sink = Callable[[StoredEvent], None]
Trigger = Literal["auto", "manual"]
Outcome = Literal["summarised", "fallback", "skipped", "failed"]

DISABLED = "compaction is disabled (compaction.enabled = false)"
ALREADY_RUNNING = "a compaction is already running for this session"
NOTHING = "nothing to compact: only the latest turn is not summarised yet"
SUMMARY_FRAME_SLACK = 64  # tokens kept free in the summary request beyond the instructions

_running: WeakKeyDictionary[Engine, set[str]] = WeakKeyDictionary()


@dataclass(frozen=True)
class CompactionResult:
    """What one compaction did; ``summary_seq`` is the appended ``CompactionSummary``."""

    outcome: Outcome
    trigger: Trigger
    reason: str | None = None
    summary_seq: int | None = None
    from_seq: int | None = None
    to_seq: int | None = None
    tokens_before: int = 0
    tokens_after: int = 0


def build_target(engine: Engine, session: SessionInfo) -> CompactionTarget:
    """The session as its next turn will see it (the same profile, budget and quotas)."""
    loaded = engine.config_for(session.workspace_path)
    resolved = engine.profile_for(session)
    budget = resolve_window(
        resolved.model,
        context_window=resolved.config.context_window,
        headroom=resolved.config.headroom,
    )
    retrieval = loaded.config.retrieval
    services = engine.services
    return CompactionTarget(
        events=services.events,
        memories=services.memories,
        clock=services.clock,
        session_id=session.id,
        workspace_id=session.workspace_id,
        tokenizer=engine.tokenizer_for(resolved.model),
        budget=budget,
        quotas=Quotas(
            memory=retrieval.memory_quota,
            workspace=retrieval.workspace_quota,
            knowledge_base=retrieval.knowledge_base_quota,
            recall=loaded.config.recall.quota,
        ),
        system_prompt=build_system_prompt(""),
        instructions=resolved.config.instructions,
        model=resolved.model,
        config=loaded.config.compaction,
    )


async def run_compaction(
    engine: Engine, session: SessionInfo, *, trigger: str, sink: Sink
) -> CompactionResult:
    """Compact the oldest unsummarised layer of ``session`` (one layer per call)."""
    trig: Trigger = "manual" if trigger == "manual" else "auto"
    target = build_target(engine, session)

    async def append(payload: EventPayload) -> StoredEvent:
        event = await shielded(
            target.events.append,
            payload,
            session_id=target.session_id,
            workspace_id=target.workspace_id,
            counter=target.tokenizer,
        )
        sink(event)
        return event

    async def skip(reason: str) -> CompactionResult:
        await append(ContextCompactionSkipped(reason=reason))
        return CompactionResult("skipped", trig, reason=reason)

    if not target.config.enabled:
        return await skip(DISABLED)
    running = _running.setdefault(engine, set())
    if session.id in running:
        return await skip(ALREADY_RUNNING)
    running.add(session.id)
    try:
        return await _compact(engine, session, target, trig, append, skip)
    finally:
        running.discard(session.id)


async def _compact(
    engine: Engine,
    session: SessionInfo,
    target: CompactionTarget,
    trigger: Trigger,
    append: Append,
    skip: Callable[[str], Awaitable[CompactionResult]],
) -> CompactionResult:
    model: SummaryModel | None = None
    model_error: str | None = None
    try:
        model = resolve_summary_model(engine, session)
    except Exception as exc:  # a broken summary profile must not block compaction: fall back
        model_error = f"summary model unavailable: {exc}"
    layer = await blocking(_choose_layer, target, model)
    if layer is None:
        return await skip(NOTHING)
    await append(ContextCompactionStarted(trigger=trigger))
    try:
        chosen: Candidate | None = None
        failure = model_error
        if model is not None:
            text, failure = await _summarise(target, model, layer, append)
            if text is not None:
                summary = candidate(target, layer, text)
                verdict = await blocking(verify, target, summary)
                if verdict.accepted:
                    chosen = summary
                else:
                    failure = f"summary rejected: {verdict.reason}"
        if chosen is None:
            reason = failure or "summary rejected"
            replacement = await blocking(fallback, target, layer)
            if replacement.tokens_after >= replacement.tokens_before:
                reason += "; the fallback note would free no tokens either, so nothing changed"
                await append(ContextCompactionFailed(reason=reason))
                return CompactionResult("failed", trigger, reason=reason)
            await append(ContextCompactionFailed(reason=reason))
            chosen = replacement
        written_by = "fallback" if chosen.fallback or model is None else model.provider.spec
        event = await append(
            CompactionSummary(
                from_seq=chosen.from_seq,
                to_seq=chosen.to_seq,
                text=chosen.text,
                model=written_by,
                tokens_before=chosen.tokens_before,
                tokens_after=chosen.tokens_after,
                fallback=chosen.fallback,
                previous_summary_seq=chosen.previous_seq,
                layer_from_seq=chosen.layer_from_seq,
                open_tasks=chosen.open_tasks,
            )
        )
        await append(ContextCompactionCompleted(summary_seq=event.seq))
    except Exception as exc:  # a failed compaction never blocks the session
        reason = f"compaction failed: {exc}"
        await append(ContextCompactionFailed(reason=reason))
        return CompactionResult("failed", trigger, reason=reason)
    return CompactionResult(
        "fallback" if chosen.fallback else "summarised",
        trigger,
        reason=failure if chosen.fallback else None,
        summary_seq=event.seq,
        from_seq=chosen.from_seq,
        to_seq=chosen.to_seq,
        tokens_before=chosen.tokens_before,
        tokens_after=chosen.tokens_after,
    )


async def _summarise(
    target: CompactionTarget, model: SummaryModel, layer: Layer, append: Append
) -> tuple[str | None, str | None]:
    """The summary text, or None and why: up to ``max_retries`` retries, with back-off."""
    config = target.config
    reason = "the summary model failed"
    attempts = config.max_retries + 1
    for attempt in range(attempts):
        if attempt:
            await asyncio.sleep(config.retry_backoff_s * 2 ** (attempt - 1))
        try:
            text = await call_summary_model(
                model,
                layer,
                session_id=target.session_id,
                call_index=await blocking(target.summary_calls),
                turn=await blocking(target.turn_count),
                append=append,
            )
        except SummaryFailed as exc:
            reason = exc.reason
            continue
        return text, None
    plural = "s" if attempts > 1 else ""
    return None, f"the summary model failed {attempts} time{plural}: {reason}"


def _choose_layer(target: CompactionTarget, model: SummaryModel | None) -> Layer | None:
    """The layer for this compaction: ``layer_fraction`` of the history the next turn may hold,
    capped so the summary request fits the summary model's own budget."""
    projection = project(target)
    room = max(0, projection.limit - projection.base)
    want = max(1, int(room * target.config.layer_fraction))
    cap: int | None = None
    if model is not None:
        previous = previous_summary(target)
        frame = target.tokenizer.count(SUMMARY_INSTRUCTIONS) + SUMMARY_FRAME_SLACK
        cap = model.budget.budget - frame - (previous.tokens if previous else 0)
    return choose_layer(target, want=want, cap=cap)


async def compact_if_needed(
    engine: Engine,
    name: str,
    *,
    sink: Sink,
    prompt: str | None = None,
    busy: Callable[[bool], None] | None = None,
) -> list[CompactionResult]:
    """The automatic trigger. After a turn (``prompt`` None): compact while the next turn would
    not fit, at most ``max_rounds`` layers. Before a turn (``prompt`` given): the same, but only
    when the window changed since the last assembly (a profile switch). Never raises: a failure is
    recorded as ``ContextCompactionFailed`` and the turn goes on under the budget guard."""
    results: list[CompactionResult] = []
    session = await blocking(engine.services.sessions.get, name)
    try:
        target = build_target(engine, session)
        if prompt is not None and not await blocking(window_changed, target):
            return results
        for _round in range(target.config.max_rounds):
            projection = await blocking(project, target, prompt=prompt)
            if not projection.due:
                break
            if busy is not None:
                busy(True)
            try:
                result = await run_compaction(engine, session, trigger="auto", sink=sink)
            finally:
                if busy is not None:
                    busy(False)
            results.append(result)
            if result.outcome not in ("summarised", "fallback"):
                break
    except Exception as exc:
        event = await shielded(
            engine.services.events.append,
            ContextCompactionFailed(reason=f"automatic compaction failed: {exc}"),
            session_id=session.id,
            workspace_id=session.workspace_id,
        )
        sink(event)
    return results
