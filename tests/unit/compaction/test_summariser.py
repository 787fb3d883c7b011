"""The summary request: what the model is told, how the call is recorded, how it fails."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from compaction_log import TOKENIZER, Log, make_target, words

from kairox.compaction.layers import Layer, choose_layer
from kairox.compaction.summariser import (
    SUMMARY_INSTRUCTIONS,
    Append,
    SummaryFailed,
    SummaryModel,
    call_summary_model,
    summary_messages,
)
from kairox.context.windows import resolve_window
from kairox.core.events import EventPayload, ModelCallStarted, StoredEvent
from kairox.models import ModelRequest, StreamItem, TextDelta
from kairox.testing.scripted_model import ScriptedProvider, ScriptLine


def layer_with_previous(log: Log) -> Layer:
    log.turn("TODO: rename src/app.py\nI live in Lisbon.", "Noted.")
    log.turn(words(30), "ok")
    log.summary(log.seqs[1][0], log.seqs[1][-1], "The user lives in Lisbon.", open_tasks=("x",))
    log.turn("We decided to use SQLite for /var/db/app.sqlite", "Agreed.")
    log.turn("latest", "ok")
    layer = choose_layer(make_target(log), want=10_000)
    assert layer is not None and layer.previous is not None
    return layer


def model(provider: object, window: int = 4096) -> SummaryModel:
    return SummaryModel(
        alias="small",
        provider=provider,  # type: ignore[arg-type]
        tokenizer=TOKENIZER,
        budget=resolve_window("openai:gpt-4o", context_window=window, headroom=256),
    )


def test_the_request_holds_previous_summary_open_tasks_and_the_layer(log: Log) -> None:
    layer = layer_with_previous(log)
    system, user = summary_messages(layer, tokenizer=TOKENIZER, budget=4000)
    for topic in ("decision", "open task", "file path", "fact the user stated"):
        assert topic in system.content
    assert "Previous summary (events" in user.content
    assert "The user lives in Lisbon." in user.content
    assert "- x\n" in user.content  # the carried open task, listed to copy verbatim
    assert f"(events {layer.layer_from_seq}-{layer.to_seq})" in user.content
    assert "[user, turn 3] We decided to use SQLite for /var/db/app.sqlite" in user.content
    assert "[assistant, turn 3] Agreed." in user.content
    assert "I live in Lisbon" not in user.content  # the old layer comes only via its summary


def test_a_transcript_too_long_for_the_summary_model_is_cut_visibly(log: Log) -> None:
    log.turn(words(3000), "ok")
    log.turn("latest", "ok")
    layer = choose_layer(make_target(log), want=1)
    assert layer is not None
    messages = summary_messages(layer, tokenizer=TOKENIZER, budget=1000)
    assert TOKENIZER.count_messages(messages) <= 1000
    assert "truncated" in messages[1].content
    assert messages[0].content == SUMMARY_INSTRUCTIONS


def recorder(log: Log, seen: list[EventPayload]) -> Append:
    async def append(payload: EventPayload) -> StoredEvent:
        seen.append(payload)
        return log.append(payload)

    return append


async def test_a_call_is_recorded_and_markers_are_stripped(log: Log) -> None:
    layer = layer_with_previous(log)
    provider = ScriptedProvider(
        [
            ScriptLine(text="reply line, not for summaries"),
            ScriptLine(purpose="summary", text='Lisbon. <memory scope="session">x</memory> SQL.'),
        ]
    )
    seen: list[EventPayload] = []
    text = await call_summary_model(
        model(provider),
        layer,
        session_id=log.session.id,
        call_index=make_target(log).summary_calls(),
        turn=4,
        append=recorder(log, seen),
    )
    assert text == "Lisbon.  SQL."
    [started] = seen
    assert isinstance(started, ModelCallStarted)
    assert (started.purpose, started.call_index, started.turn) == ("summary", 0, 4)
    with pytest.raises(SummaryFailed, match=r"no reply #2 for purpose 'summary'"):
        await call_summary_model(
            model(provider),
            layer,
            session_id=log.session.id,
            call_index=make_target(log).summary_calls(),
            turn=4,
            append=recorder(log, seen),
        )
    assert [p.call_index for p in seen if isinstance(p, ModelCallStarted)] == [0, 1]


class Capturing:
    spec = "capture:test"
    model_name = "capture"

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.requests.append(request)
        yield TextDelta(self.text)

    async def aclose(self) -> None:
        return None


async def test_the_request_is_a_summary_purpose_call(log: Log) -> None:
    layer = layer_with_previous(log)
    provider = Capturing("ok summary")
    await call_summary_model(
        model(provider),
        layer,
        session_id=log.session.id,
        call_index=make_target(log).summary_calls(),
        turn=4,
        append=recorder(log, []),
    )
    [request] = provider.requests
    assert request.purpose == "summary" and request.tools == () and request.call_index == 0
    assert request.max_tokens is not None and request.max_tokens <= 256
    assert request.session_id == log.session.id


async def test_errors_and_empty_replies_are_summary_failures(log: Log) -> None:
    layer = layer_with_previous(log)
    failing = ScriptedProvider([ScriptLine(purpose="summary", error="model is down")])
    with pytest.raises(SummaryFailed, match="model is down"):
        await call_summary_model(
            model(failing),
            layer,
            session_id=log.session.id,
            call_index=make_target(log).summary_calls(),
            turn=4,
            append=recorder(log, []),
        )
    with pytest.raises(SummaryFailed, match="no text"):
        await call_summary_model(
            model(Capturing("  ")),
            layer,
            session_id=log.session.id,
            call_index=make_target(log).summary_calls(),
            turn=4,
            append=recorder(log, []),
        )
