"""The pieces that need no app: trace lines, meter levels, card text and error lines."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kairox.core.errors import ModelError, SessionBusy
from kairox.core.events import (
    ContextAssembled,
    ContextCompactionFailed,
    ContextCompactionSkipped,
    ContextCompactionStarted,
    EventPayload,
    MemoryAccepted,
    MemoryMarkerRejected,
    MemoryProposed,
    MemoryRejected,
    ModelTokenDelta,
    StoredEvent,
    TurnFailed,
    UntrustedInput,
)
from kairox.core.records import MemoryRecord
from kairox.core.types import Actor, ContextSource, MemoryScope, MemoryStatus
from kairox.tui.cards import card_text
from kairox.tui.meter import MeterReading, reading_of, render_reading
from kairox.tui.notices import error_line
from kairox.tui.session_events import compaction_notice, memory_ids_of
from kairox.tui.trace import describe_event

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def stored(payload: EventPayload, seq: int = 1) -> StoredEvent:
    return StoredEvent(
        seq=seq,
        ts=T0,
        session_id="ses_1",
        workspace_id="ws_1",
        type=payload.type,
        schema_version=1,
        payload=payload,
    )


def assembled(used: int, budget: int) -> ContextAssembled:
    return ContextAssembled(
        turn=3,
        model="scripted:x",
        tokenizer="estimate",
        estimated=True,
        window=budget + 100,
        headroom=100,
        budget=budget,
        used=used,
        by_source={ContextSource.HISTORY: used - 10, ContextSource.SYSTEM: 10},
        items=(),
        system_prompt="",
    )


def record(status: MemoryStatus, body: str = "JetBrains Mono") -> MemoryRecord:
    return MemoryRecord(
        id="mem_1",
        scope=MemoryScope.USER,
        key="editor.font",
        body=body,
        status=status,
        version=2,
        workspace_id=None,
        session_id=None,
        created_at=T0,
        updated_at=T0,
        approved_at=None,
        decided_by=Actor.USER if status is not MemoryStatus.PENDING else None,
        decision_reason="not true" if status is MemoryStatus.REJECTED else None,
        proposed_session_id="ses_1",
        proposed_turn=1,
        untrusted_inputs=(),
    )


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            MemoryAccepted(
                memory_id="m",
                scope=MemoryScope.USER,
                key="editor.font",
                body="x",
                version=2,
                decided_by=Actor.USER,
            ),
            "MemoryAccepted user editor.font v2 by user",
        ),
        (
            MemoryRejected(
                memory_id="m",
                scope=MemoryScope.WORKSPACE,
                key="k",
                reason="bad",
                decided_by=Actor.USER,
            ),
            "MemoryRejected workspace k: bad",
        ),
        (
            TurnFailed(turn=2, reason="model error (openai): refused"),
            "TurnFailed turn 2: model error (openai): refused",
        ),
        (assembled(1200, 7000), "ContextAssembled turn 3: 1,200/7,000 tokens est."),
        (
            MemoryMarkerRejected(turn=1, reason="user memory needs a key", raw="<memory>x"),
            "MemoryMarkerRejected: user memory needs a key '<memory>x'",
        ),
    ],
)
def test_trace_lines(payload: EventPayload, expected: str) -> None:
    assert describe_event(stored(payload)) == expected


def test_token_deltas_stay_out_of_the_trace() -> None:
    assert describe_event(stored(ModelTokenDelta(turn=1, text="hi"))) is None


def test_untrusted_proposals_are_flagged_in_the_trace() -> None:
    payload = MemoryProposed(
        memory_id="m",
        scope=MemoryScope.USER,
        key="k",
        body="b",
        untrusted_inputs=(UntrustedInput(kind="tool_result", ref="seq:4"),),
    )
    assert describe_event(stored(payload)) == "MemoryProposed user k: b [untrusted input]"


@pytest.mark.parametrize(
    ("used", "level"), [(100, "ok"), (740, "ok"), (760, "warn"), (849, "warn"), (850, "over")]
)
def test_meter_level_follows_the_threshold(used: int, level: str) -> None:
    reading = reading_of(assembled(used, 1000), 0.85)
    assert reading.level == level
    text = render_reading(reading).plain
    assert f"{used:,}/1,000" in text
    assert ("compaction at 85%" in text) == (level != "ok")


def test_meter_lists_sources_in_a_fixed_order() -> None:
    reading = reading_of(assembled(500, 1000), 0.85)
    assert [s for s, _ in reading.by_source] == [ContextSource.SYSTEM, ContextSource.HISTORY]
    assert "sys 10 · hist 490" in render_reading(reading).plain


def test_meter_with_no_budget_is_full() -> None:
    assert MeterReading(used=5, budget=0, by_source=(), threshold=0.85).level == "over"


def test_card_shows_replaced_value_and_untrusted_warning() -> None:
    proposal = MemoryProposed(
        memory_id="mem_1",
        scope=MemoryScope.USER,
        key="editor.font",
        body="JetBrains Mono",
        replaces_body="Fira Code",
        untrusted_inputs=(UntrustedInput(kind="tool_result", ref="seq:7"),),
    )
    text = card_text(proposal, record(MemoryStatus.PENDING)).plain
    assert "replaces: Fira Code" in text
    assert "⚠ proposed after untrusted input: tool_result seq:7" in text
    assert "a approve · r reject · e edit & approve" in text
    rejected = card_text(proposal, record(MemoryStatus.REJECTED)).plain
    assert "rejected by user: not true" in rejected
    default = record(MemoryStatus.REJECTED).model_copy(
        update={"decision_reason": "rejected by the user"}
    )
    assert card_text(proposal, default).plain.endswith("rejected by user")  # said once
    edited = card_text(proposal, record(MemoryStatus.ACCEPTED, body="Iosevka")).plain
    assert edited.startswith("Iosevka") and "accepted by user (edited)" in edited


def test_error_lines_are_one_line() -> None:
    assert error_line(ModelError("openai", "connection refused\n at 127.0.0.1")) == (
        "model error (openai): connection refused at 127.0.0.1"
    )
    assert error_line(SessionBusy("main")).startswith("session busy: 'main'")
    assert error_line(RuntimeError("boom")) == "internal error (RuntimeError): boom"


def test_a_replacement_touches_both_memories() -> None:
    accepted = MemoryAccepted(
        memory_id="mem_new",
        scope=MemoryScope.USER,
        key="k",
        body="b",
        version=3,
        decided_by=Actor.USER,
        replaced_memory_id="mem_old",
    )
    assert memory_ids_of(stored(accepted)) == {"mem_new", "mem_old"}
    assert memory_ids_of(stored(ModelTokenDelta(turn=1, text="x"))) == set()


def test_compaction_notices() -> None:
    assert compaction_notice(ContextCompactionStarted(trigger="manual")) == (
        "compacting (manual)…",
        "info",
    )
    assert compaction_notice(ContextCompactionFailed(reason="no model")) == (
        "compaction failed: no model",
        "error",
    )
    assert compaction_notice(ContextCompactionSkipped(reason="nothing")) == (
        "compaction skipped: nothing",
        "warning",
    )
    assert compaction_notice(TurnFailed(turn=1, reason="x")) is None
