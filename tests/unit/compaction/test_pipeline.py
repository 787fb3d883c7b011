"""``run_compaction`` over plain inputs (a target, a summary model or the reason it is missing,
and an append function): no engine, no runtime. A summary that cannot be used changes nothing
unless the next turn would not fit; only then does the fallback apply, and it says why."""

from __future__ import annotations

from compaction_log import Log, make_target, words

from kairox.compaction import SummaryUnavailable, run_compaction
from kairox.compaction.pipeline import UNCHANGED
from kairox.compaction.policy import project
from kairox.compaction.summariser import Append
from kairox.core.events import CompactionSummary, EventPayload, StoredEvent


def recorder(log: Log) -> tuple[list[StoredEvent], Append]:
    seen: list[StoredEvent] = []

    async def append(payload: EventPayload) -> StoredEvent:
        event = log.append(payload)
        seen.append(event)
        return event

    return seen, append


async def test_an_unusable_summary_changes_nothing_when_the_next_turn_fits(log: Log) -> None:
    for _ in range(3):
        log.turn(words(60), words(60, "beta"))
    target = make_target(log, window=8192, headroom=512)
    assert not project(target).due
    seen, append = recorder(log)
    result = await run_compaction(
        target,
        SummaryUnavailable("no such profile 'tiny'"),
        append,
    )
    assert result.outcome == "failed" and result.summary_seq is None
    assert result.reason == (
        "summary model unavailable: no such profile 'tiny'; "
        f"{UNCHANGED} (the next turn fits without compaction)"
    )
    assert [e.type for e in seen] == ["ContextCompactionStarted", "ContextCompactionFailed"]


async def test_the_fallback_applies_only_when_the_next_turn_would_not_fit(log: Log) -> None:
    for _ in range(6):
        log.turn(words(150), words(150, "beta"))
    target = make_target(log, window=1024, headroom=128)
    assert project(target).due
    seen, append = recorder(log)
    result = await run_compaction(
        target,
        SummaryUnavailable("no such profile 'tiny'"),
        append,
        trigger="auto",
    )
    assert result.outcome == "fallback"
    assert [e.type for e in seen] == [
        "ContextCompactionStarted",
        "ContextCompactionFailed",
        "CompactionSummary",
        "ContextCompactionCompleted",
    ]
    summary = seen[2].payload
    assert isinstance(summary, CompactionSummary) and summary.fallback
    assert summary.fallback_reason == result.reason
    assert result.reason is not None
    assert result.reason.startswith(
        "summary model unavailable: no such profile 'tiny'; the next turn would not fit otherwise"
    )
