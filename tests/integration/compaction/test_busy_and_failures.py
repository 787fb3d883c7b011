"""Manual compaction, the busy-state guards, model failures, and compaction switched off."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from compaction_chat import Gate, OpenChat, replies, summaries, wait_for, write_workspace

from kairox.compaction.pipeline import DISABLED, NOTHING, UNCHANGED
from kairox.core.events import (
    CompactionSummary,
    ContextAssembled,
    ContextCompactionFailed,
    ContextCompactionSkipped,
    StoredEvent,
    TurnFailed,
    UserMessageAdded,
)
from kairox.core.types import SessionState
from kairox.models import Purpose
from kairox.runtime.actor import SendMessage, SwitchProfile
from kairox.runtime.compactor import ALREADY_RUNNING

TINY = '[profiles.tiny]\nmodel = "scripted:SCRIPT"\ncontext_window = 1024\nheadroom = 128\n'
Install = Callable[[set[Purpose]], Gate]


def seq_of(events: list[StoredEvent], kind: str, index: int = 0) -> int:
    return [e.seq for e in events if e.type == kind][index]


async def test_manual_compaction_during_a_turn_runs_after_it(
    workspace: Path, open_chat: OpenChat, gate: Install
) -> None:
    held = gate({"reply"})
    held.open.set()
    write_workspace(workspace, [*replies(3), *summaries("Turns one and two: greetings.")])
    chat = await open_chat()
    await chat.send("one")
    await chat.send("two")
    held.open.clear()
    held.entered.clear()
    actor = chat.facade.chat._engine.actor(chat.name)
    turn = actor.enqueue(SendMessage("three"))
    await asyncio.wait_for(held.entered.wait(), timeout=30)
    assert chat.facade.chat.state(chat.name) is SessionState.RUNNING_TURN
    compaction = chat.facade.chat.compact_later(chat.name)
    assert chat.facade.chat.queued(chat.name) == 1
    assert not any(e.type.startswith("ContextCompaction") for e in await chat.events())
    held.open.set()
    await turn
    result = await compaction
    assert getattr(result, "outcome", None) == "summarised"
    events = await chat.events()
    third_done = [e for e in events if e.type == "AssistantMessageCompleted"][2]
    started = next(e for e in events if e.type == "ContextCompactionStarted")
    assert started.seq > third_done.seq
    assert started.payload.trigger == "manual"  # type: ignore[union-attr]
    summary = next(e.payload for e in events if isinstance(e.payload, CompactionSummary))
    assert isinstance(summary, CompactionSummary)
    assert summary.to_seq < seq_of(events, "UserMessageAdded", 2)  # the latest turn stays


async def test_a_profile_switch_during_a_compaction_waits_for_it(
    workspace: Path, open_chat: OpenChat, gate: Install
) -> None:
    held = gate({"summary"})
    write_workspace(workspace, [*replies(3), *summaries("A summary.")], profiles=TINY)
    chat = await open_chat()
    await chat.send("one")
    await chat.send("two")
    compaction = chat.facade.chat.compact_later(chat.name)
    await asyncio.wait_for(held.entered.wait(), timeout=30)
    assert chat.facade.chat.state(chat.name) is SessionState.COMPACTING
    switch = chat.facade.chat._engine.actor(chat.name).enqueue(SwitchProfile("tiny"))
    assert chat.facade.chat.queued(chat.name) == 1
    assert not switch.done()
    assert not any(e.type == "ProfileSwitched" for e in await chat.events())
    held.open.set()
    await compaction
    info = await switch
    assert info.profile == "tiny"
    events = await chat.events()
    assert seq_of(events, "ProfileSwitched") > seq_of(events, "ContextCompactionCompleted")
    assert chat.facade.chat.state(chat.name) is SessionState.IDLE


async def test_after_a_switch_to_a_smaller_window_the_next_turn_compacts_first(
    workspace: Path, open_chat: OpenChat
) -> None:
    long_reply = "A long and careful answer about the migration. " * 12
    write_workspace(
        workspace,
        [*replies(8, long_reply), *summaries("Earlier turns: a migration.")],
        profiles=TINY,
    )
    chat = await open_chat()
    for n in range(4):
        streamed, _ = await chat.send(f"question {n}")
        assert not any(e.type.startswith("ContextCompaction") for e in streamed)
    await chat.facade.chat.switch_profile(chat.name, "tiny")
    streamed, outcome = await chat.send("and now?")
    assert outcome.failure is None
    kinds = [e.type for e in streamed]
    assert kinds.index("ContextCompactionStarted") < kinds.index("UserMessageAdded")
    assert kinds.index("ContextCompactionCompleted") < kinds.index("UserMessageAdded")
    trace = next(e.payload for e in streamed if isinstance(e.payload, ContextAssembled))
    assert isinstance(trace, ContextAssembled) and trace.budget == 1024 - 128
    assert any(i.source.value == "summary" and i.included for i in trace.items)


async def test_a_failed_summary_leaves_the_context_as_it_was(
    workspace: Path, open_chat: OpenChat
) -> None:
    failing = [{"purpose": "summary", "error": "model overloaded"}] * 3
    write_workspace(workspace, [*replies(4), *failing])
    chat = await open_chat()
    for text in ("TODO: write the release notes", "two", "three"):
        await chat.send(text)
    result = await chat.facade.chat.compact(chat.name)
    assert result.outcome == "failed"
    assert result.reason == (
        "the summary model failed 3 times: model overloaded; "
        f"{UNCHANGED} (the next turn fits without compaction)"
    )
    events = await chat.events()
    start = seq_of(events, "ContextCompactionStarted")
    after = [e for e in events if e.seq > start]
    assert [e.type for e in after] == [
        "ModelCallStarted",
        "ModelCallStarted",
        "ModelCallStarted",
        "ContextCompactionFailed",
    ]
    assert [e.payload.call_index for e in after[:3]] == [0, 1, 2]  # type: ignore[union-attr]
    failed = after[3].payload
    assert isinstance(failed, ContextCompactionFailed) and failed.reason == result.reason
    streamed, outcome = await chat.send("four")  # the session goes on, its history whole
    assert outcome.failure is None
    trace = next(e.payload for e in streamed if isinstance(e.payload, ContextAssembled))
    assert isinstance(trace, ContextAssembled)
    assert not any(i.source.value == "summary" for i in trace.items)
    users = [e.seq for e in events if isinstance(e.payload, UserMessageAdded)]
    assert all(any(i.ref == f"seq:{u}" and i.included for i in trace.items) for u in users)


async def test_a_summary_that_frees_nothing_leaves_the_context_as_it_was(
    workspace: Path, open_chat: OpenChat
) -> None:
    wordy = "A very long summary that says more than the turns did. " * 40
    write_workspace(workspace, [*replies(3, "ok"), *summaries(wordy)])
    chat = await open_chat()
    await chat.send("hi")
    await chat.send("yo")
    result = await chat.facade.chat.compact(chat.name)
    assert result.outcome == "failed"
    assert result.reason is not None
    assert result.reason.startswith("summary rejected: the summary frees no tokens")
    assert result.reason.endswith(f"{UNCHANGED} (the next turn fits without compaction)")
    events = await chat.events()
    assert not any(isinstance(e.payload, CompactionSummary) for e in events)
    assert events[-1].type == "ContextCompactionFailed"


async def test_a_model_failure_falls_back_only_when_the_next_turn_would_not_fit(
    workspace: Path, open_chat: OpenChat
) -> None:
    long_reply = "A long and careful answer about the migration. " * 12
    failing = [{"purpose": "summary", "error": "model overloaded"}] * 3
    write_workspace(workspace, [*replies(5, long_reply), *failing], profiles=TINY)
    chat = await open_chat()
    for text in ("TODO: write the release notes", "two", "three", "four"):
        streamed, _ = await chat.send(text)
        assert not any(e.type.startswith("ContextCompaction") for e in streamed)
    await chat.facade.chat.switch_profile(chat.name, "tiny")  # now the history does not fit
    result = await chat.facade.chat.compact(chat.name)
    assert result.outcome == "fallback"
    events = await chat.events()
    start = seq_of(events, "ContextCompactionStarted")
    after = [e for e in events if e.seq > start]
    assert [e.type for e in after] == [
        "ModelCallStarted",
        "ModelCallStarted",
        "ModelCallStarted",
        "ContextCompactionFailed",
        "CompactionSummary",
        "ContextCompactionCompleted",
    ]
    failed = after[3].payload
    assert isinstance(failed, ContextCompactionFailed)
    assert failed.reason == "the summary model failed 3 times: model overloaded"
    summary = after[4].payload
    assert isinstance(summary, CompactionSummary)
    assert summary.fallback and summary.model == "fallback"
    assert summary.fallback_reason is not None and summary.fallback_reason == result.reason
    assert summary.fallback_reason.startswith(
        "the summary model failed 3 times: model overloaded; the next turn would not fit otherwise"
    )
    assert "dropped without a summary" in summary.text
    assert summary.open_tasks == ("write the release notes",)
    streamed, outcome = await chat.send("five")  # the session goes on
    assert outcome.failure is None
    trace = next(e.payload for e in streamed if isinstance(e.payload, ContextAssembled))
    assert isinstance(trace, ContextAssembled)
    assert any(i.ref == f"seq:{after[4].seq}" and i.included for i in trace.items)


async def test_a_fallback_that_frees_nothing_changes_nothing(
    workspace: Path, open_chat: OpenChat
) -> None:
    write_workspace(workspace, [*replies(3, "ok"), {"purpose": "summary", "error": "down"}])
    chat = await open_chat()
    await chat.send("hi")
    await chat.send("yo")
    result = await chat.facade.chat.compact(chat.name)
    assert getattr(result, "outcome", None) == "failed"
    assert UNCHANGED in str(result.reason)
    events = await chat.events()
    start = seq_of(events, "ContextCompactionStarted")
    assert [e.type for e in events if e.seq > start] == [
        "ModelCallStarted",
        "ModelCallStarted",
        "ModelCallStarted",
        "ContextCompactionFailed",
    ]
    _streamed, outcome = await chat.send("still fine")
    assert outcome.failure is None and outcome.reply == "ok"


async def test_disabled_compaction_skips_and_the_budget_guard_still_refuses(
    workspace: Path, open_chat: OpenChat
) -> None:
    write_workspace(workspace, replies(12), compaction="enabled = false")
    chat = await open_chat()
    for n in range(2):
        await chat.send(f"turn {n}")
    result = await chat.facade.chat.compact(chat.name)
    assert getattr(result, "outcome", None) == "skipped"
    events = await chat.events()
    [skipped] = [e.payload for e in events if isinstance(e.payload, ContextCompactionSkipped)]
    assert isinstance(skipped, ContextCompactionSkipped) and skipped.reason == DISABLED
    assert not any(e.type == "ContextCompactionStarted" for e in events)
    # An automatic trigger that is due is suppressed the same way.
    streamed: list[StoredEvent] = []
    for n in range(12):
        streamed, _ = await chat.send("tell me everything " * 30 + str(n))
        if any(e.type == "ContextCompactionSkipped" for e in streamed):
            break
    assert [e.type for e in streamed][-1] == "ContextCompactionSkipped"
    # An overflowing prompt is still refused before anything is sent.
    streamed, outcome = await chat.send("overflow " * 3000)
    assert outcome.failure is not None and outcome.failure.startswith("context overflow")
    [failed] = [e.payload for e in streamed if isinstance(e.payload, TurnFailed)]
    assert isinstance(failed, TurnFailed) and failed.reason == outcome.failure
    assert not any(e.type == "ModelCallStarted" for e in streamed)


async def test_nothing_to_compact_is_skipped(workspace: Path, open_chat: OpenChat) -> None:
    write_workspace(workspace, replies(2))
    chat = await open_chat()
    result = await chat.facade.chat.compact(chat.name)
    assert getattr(result, "reason", None) == NOTHING
    await chat.send("only one turn")
    result = await chat.facade.chat.compact(chat.name)
    assert getattr(result, "outcome", None) == "skipped"
    events = await chat.events()
    assert [e.type for e in events if e.type.startswith("ContextCompaction")] == [
        "ContextCompactionSkipped",
        "ContextCompactionSkipped",
    ]


async def test_a_second_request_while_one_runs_is_skipped(
    workspace: Path, open_chat: OpenChat, gate: Install
) -> None:
    held = gate({"summary"})
    write_workspace(workspace, [*replies(3), *summaries("A summary.", "unused")])
    chat = await open_chat()
    await chat.send("one")
    await chat.send("two")
    engine = chat.facade.chat._engine
    setup = await engine.setup(chat.name)
    seen: list[StoredEvent] = []
    subscription = engine.services.events.subscribe(session_id=setup.session.id)

    async def follow() -> None:
        async for event in subscription:
            seen.append(event)

    following = asyncio.create_task(follow())
    first = asyncio.create_task(engine.compactor.compact(setup, trigger="manual"))
    await asyncio.wait_for(held.entered.wait(), timeout=30)
    second = await engine.compactor.compact(setup, trigger="auto")
    assert (second.outcome, second.reason) == ("skipped", ALREADY_RUNNING)
    held.open.set()
    assert (await first).outcome == "summarised"
    await wait_for(lambda: any(e.type == "ContextCompactionCompleted" for e in seen))
    subscription.close()
    following.cancel()
    assert [e.type for e in seen] == [
        "ContextCompactionStarted",
        "ModelCallStarted",
        "ContextCompactionSkipped",
        "CompactionSummary",
        "ContextCompactionCompleted",
    ]
    users = [e for e in await chat.events() if isinstance(e.payload, UserMessageAdded)]
    assert len(users) == 2
