"""Automatic compaction end to end: the right turn, the event order, raw events kept, and the
summary standing in for its range in the next context; then a second, layered compaction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from compaction_chat import (
    USER_TEXT,
    Gate,
    OpenChat,
    replies,
    summaries,
    types_between,
    user_texts,
    write_workspace,
)

from kairox.core.events import (
    CompactionSummary,
    ContextAssembled,
    ContextCompactionCompleted,
    StoredEvent,
)
from kairox.core.types import ContextSource
from kairox.models import Purpose

BUDGET = 2048 - 256
LIMIT = int(BUDGET * 0.85)
FIRST = "The user is migrating a database step by step; steps 01-03 changed the schema."
SECOND = "Migration steps 01-06 are done: schema, rows and indexes were updated."


def step(n: int) -> str:
    return f"{USER_TEXT} (step {n:02d})"


async def test_a_long_session_compacts_at_the_right_turn(
    workspace: Path, open_chat: OpenChat
) -> None:
    write_workspace(workspace, [*replies(12), *summaries(FIRST, SECOND)])
    chat = await open_chat()
    used: list[int] = []
    compacted_at: int | None = None
    streamed: list[StoredEvent] = []
    for n in range(1, 13):
        streamed, outcome = await chat.send(step(n))
        assert outcome.failure is None
        [trace] = [e.payload for e in streamed if isinstance(e.payload, ContextAssembled)]
        assert all(i.included for i in trace.items)  # nothing was ever dropped for lack of room
        used.append(trace.used)
        if any(e.type == "ContextCompactionStarted" for e in streamed):
            compacted_at = n
            break
    assert compacted_at is not None and compacted_at >= 3
    # Each turn adds the same amount, so the next turn's size is known exactly: compaction ran
    # after the first turn whose successor would have passed threshold x budget.
    growth = used[-1] - used[-2]
    assert used[-2] - used[-3] == growth
    assert used[-1] + growth > LIMIT >= used[-2] + growth

    completed = next(e for e in streamed if e.type == "AssistantMessageCompleted")
    assert [e.type for e in streamed if e.seq > completed.seq] == [
        "ContextCompactionStarted",
        "ModelCallStarted",
        "CompactionSummary",
        "ContextCompactionCompleted",
    ]
    summary_event = next(e for e in streamed if isinstance(e.payload, CompactionSummary))
    summary = summary_event.payload
    assert isinstance(summary, CompactionSummary)
    done = streamed[-1].payload
    assert isinstance(done, ContextCompactionCompleted) and done.summary_seq == summary_event.seq
    events = await chat.events()
    users = user_texts(events)
    assert summary.from_seq == users[0][0]
    assert summary.to_seq < users[-1][0]  # the latest turn stays whole
    assert (summary.text, summary.fallback, summary.previous_summary_seq) == (FIRST, False, None)
    assert summary.tokens_after < summary.tokens_before
    assert chat.facade.chat.state(chat.name).value == "idle"

    # Raw events are never deleted: the whole replaced range is still in the log.
    seqs = {e.seq for e in events}
    assert set(range(summary.from_seq, summary.to_seq + 1)) <= seqs
    assert [text for _seq, text in users] == [step(n) for n in range(1, compacted_at + 1)]

    # The next context holds the summary in place of the range, as a durable note.
    await chat.send(step(compacted_at + 1))
    trace = await chat.facade.context.trace(chat.name)
    assert trace is not None
    by_ref = {i.ref: i for i in trace.items}
    note = by_ref[f"seq:{summary_event.seq}"]
    assert note.included and note.source is ContextSource.SUMMARY
    history = [int(i.ref[4:]) for i in trace.items if i.source is ContextSource.HISTORY]
    assert history and all(seq > summary.to_seq for seq in history)
    messages = await chat.facade.context.replay(chat.name, compacted_at + 1)
    texts = [m.content for m in messages]
    header = "<kairox:summary>"
    (note_message,) = [m for m in messages if m.content.startswith(header)]
    # The assistant's note (neither the user's words nor an instruction), ahead of history,
    # which opens with the user's message so the roles alternate.
    assert FIRST in note_message.content and note_message.role == "assistant"
    first_history = next(m for m in messages[1:] if not m.content.startswith("<kairox:"))
    assert messages.index(note_message) + 1 == messages.index(first_history)
    assert first_history.role == "user"
    replaced = [text for seq, text in users if seq <= summary.to_seq]
    assert replaced and not any(t in texts for t in replaced)


async def test_a_second_compaction_takes_only_the_new_layer_and_the_previous_summary(
    workspace: Path, open_chat: OpenChat, gate: Callable[[set[Purpose]], Gate]
) -> None:
    recorder = gate(set())  # records requests, holds nothing
    recorder.open.set()
    write_workspace(workspace, [*replies(24), *summaries(FIRST, SECOND, "third")])
    chat = await open_chat()
    n = 0
    while len(await chat.facade.context.summaries(chat.name)) < 2:
        n += 1
        assert n <= 24
        await chat.send(step(n))
    first, second = await chat.facade.context.summaries(chat.name)
    s1, s2 = first.payload, second.payload
    assert isinstance(s1, CompactionSummary) and isinstance(s2, CompactionSummary)
    # Summaries chain: the second covers the first's range and its own layer, which starts
    # right after the first range; the first summary is named as the one it folds in.
    assert s2.from_seq == s1.from_seq
    assert s2.previous_summary_seq == first.seq
    assert s2.layer_from_seq is not None and s1.to_seq < s2.layer_from_seq <= s2.to_seq
    events = await chat.events()
    assert types_between(events, s1.to_seq, s2.layer_from_seq).count("UserMessageAdded") == 0

    requests = [r for r in recorder.requests if r.purpose == "summary"]
    assert len(requests) == 2
    prompt = requests[1].messages[-1].content
    assert f"Previous summary (events {s1.from_seq}-{s1.to_seq}):\n{FIRST}" in prompt
    assert f"(events {s2.layer_from_seq}-{s2.to_seq})" in prompt
    users = user_texts(events)
    old = [text for seq, text in users if seq <= s1.to_seq]
    new = [text for seq, text in users if s1.to_seq < seq <= s2.to_seq]
    assert old and new
    assert not any(t in prompt for t in old)  # the first layer comes only through its summary
    assert all(t in prompt for t in new)

    await chat.send(step(n + 1))
    trace = await chat.facade.context.trace(chat.name)
    assert trace is not None
    refs = {i.ref: i for i in trace.items}
    assert refs[f"seq:{second.seq}"].included
    assert f"seq:{first.seq}" not in refs  # superseded, not even a candidate
