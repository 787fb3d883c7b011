"""The compaction pipeline that automatic and manual compaction share, over plain inputs.

``run_compaction`` appends ``ContextCompactionStarted``, then ``CompactionSummary`` and
``ContextCompactionCompleted``. A summary that cannot be used (the model failed after bounded
retries with back-off, or the summary frees nothing or drops a pinned item) changes nothing: it
appends ``ContextCompactionFailed`` with the reason, unless the next turn would not fit without
compaction; only then does a deterministic fallback note replace the layer, and the summary
event says why (``fallback_reason``). ``ContextCompactionSkipped`` alone means compaction is
disabled or has nothing to do. When to compact is the runtime's decision, not this module's.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from kairox.compaction.layers import Layer, choose_layer, previous_summary
from kairox.compaction.policy import project
from kairox.compaction.summariser import (
    SUMMARY_INSTRUCTIONS,
    Append,
    SummaryFailed,
    SummaryModel,
    call_summary_model,
)
from kairox.compaction.target import CompactionTarget
from kairox.compaction.verify import Candidate, candidate, fallback, verify
from kairox.core.aio import blocking
from kairox.core.events import (
    CompactionSummary,
    ContextCompactionCompleted,
    ContextCompactionFailed,
    ContextCompactionSkipped,
    ContextCompactionStarted,
)
from kairox.core.outcomes import CompactionResult, Trigger

DISABLED = "compaction is disabled (compaction.enabled = false)"
NOTHING = "nothing to compact: only the latest turn is not summarised yet"
UNCHANGED = "the context was left as it was"
SUMMARY_FRAME_SLACK = 64  # tokens kept free in the summary request beyond the instructions


@dataclass(frozen=True)
class SummaryUnavailable:
    """The summary model could not be built (a broken summary profile); compaction still runs
    and falls back when the next turn needs the room."""

    reason: str


async def run_compaction(
    target: CompactionTarget,
    summary_model: SummaryModel | SummaryUnavailable,
    append: Append,
    *,
    trigger: Trigger = "manual",
    prompt: str | None = None,
) -> CompactionResult:
    """Compact the oldest unsummarised layer of ``target`` (one layer per call).

    ``append`` records an event in the session's log; ``prompt`` is the next prompt when it is
    known (compaction before a turn), used to judge whether the next turn fits."""

    async def skip(reason: str) -> CompactionResult:
        await append(ContextCompactionSkipped(reason=reason))
        return CompactionResult("skipped", trigger, reason=reason)

    if not target.config.enabled:
        return await skip(DISABLED)
    model = summary_model if isinstance(summary_model, SummaryModel) else None
    layer = await blocking(_choose_layer, target, model)
    if layer is None:
        return await skip(NOTHING)
    await append(ContextCompactionStarted(trigger=trigger))
    try:
        return await _compact(target, summary_model, layer, append, trigger, prompt)
    except Exception as exc:  # a failed compaction never blocks the session
        reason = f"compaction failed: {exc}"
        await append(ContextCompactionFailed(reason=reason))
        return CompactionResult("failed", trigger, reason=reason)


async def _compact(
    target: CompactionTarget,
    summary_model: SummaryModel | SummaryUnavailable,
    layer: Layer,
    append: Append,
    trigger: Trigger,
    prompt: str | None,
) -> CompactionResult:
    chosen: Candidate | None = None
    fallback_reason: str | None = None
    if isinstance(summary_model, SummaryModel):
        text, failure = await _summarise(target, summary_model, layer, append)
        if text is not None:
            summary = candidate(target, layer, text)
            verdict = await blocking(verify, target, summary)
            if verdict.accepted:
                chosen = summary
            else:
                failure = f"summary rejected: {verdict.reason}"
    else:
        failure = f"summary model unavailable: {summary_model.reason}"
    if chosen is None:
        reason = failure or "summary rejected"
        projection = await blocking(project, target, prompt=prompt)
        if not projection.due:
            reason += f"; {UNCHANGED} (the next turn fits without compaction)"
            await append(ContextCompactionFailed(reason=reason))
            return CompactionResult("failed", trigger, reason=reason)
        replacement = await blocking(fallback, target, layer)
        if replacement.tokens_after >= replacement.tokens_before:
            reason += "; the fallback note would free no tokens either, so nothing changed"
            await append(ContextCompactionFailed(reason=reason))
            return CompactionResult("failed", trigger, reason=reason)
        await append(ContextCompactionFailed(reason=reason))
        fallback_reason = (
            f"{reason}; the next turn would not fit otherwise "
            f"({projection.total} tokens for a limit of {projection.limit})"
        )
        chosen = replacement
    written_by = (
        summary_model.provider.spec
        if isinstance(summary_model, SummaryModel) and not chosen.fallback
        else "fallback"
    )
    event = await append(
        CompactionSummary(
            from_seq=chosen.from_seq,
            to_seq=chosen.to_seq,
            text=chosen.text,
            model=written_by,
            tokens_before=chosen.tokens_before,
            tokens_after=chosen.tokens_after,
            fallback=chosen.fallback,
            fallback_reason=fallback_reason,
            previous_summary_seq=chosen.previous_seq,
            layer_from_seq=chosen.layer_from_seq,
            open_tasks=chosen.open_tasks,
            untrusted_inputs=chosen.untrusted_inputs,
        )
    )
    await append(ContextCompactionCompleted(summary_seq=event.seq))
    return CompactionResult(
        "fallback" if chosen.fallback else "summarised",
        trigger,
        reason=fallback_reason,
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
