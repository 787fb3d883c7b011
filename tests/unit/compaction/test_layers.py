"""What gets summarised: the oldest whole turns after the previous summary, never the latest."""

from __future__ import annotations

import pytest
from compaction_log import Log, make_target, words

from kairox.compaction import layers
from kairox.compaction.layers import choose_layer, open_tasks, previous_summary, transcript_line
from kairox.core.events import StoredEvent, TurnFailed


def test_first_layer_is_the_oldest_whole_turns_until_it_is_big_enough(log: Log) -> None:
    for _ in range(6):
        log.turn(words(50), words(50, "beta"))
    layer = choose_layer(make_target(log), want=250)
    assert layer is not None and layer.previous is None
    assert [i.turn for i in layer.items] == [1, 1, 2, 2, 3, 3]
    assert layer.from_seq == layer.layer_from_seq == log.seqs[1][0]
    assert layer.to_seq == log.seqs[3][-1]
    assert layer.tokens >= 250 > sum(i.tokens for i in layer.items[:4])
    assert layer.tokens_before == layer.tokens
    assert layer.turns == (1, 3)


def test_the_latest_turn_is_never_summarised(log: Log) -> None:
    log.turn("only turn", "reply")
    assert choose_layer(make_target(log), want=10_000) is None
    log.turn("second", "reply")
    layer = choose_layer(make_target(log), want=10_000)
    assert layer is not None and {i.turn for i in layer.items} == {1}


def test_a_turn_that_failed_before_its_reply_is_never_summarised(log: Log) -> None:
    log.turn("kept question", "kept answer")
    refused = log.turn("refused " + words(40, "secret"))
    log.append(TurnFailed(turn=refused, reason="context overflow", refused=True))
    log.turn("later question", "later answer")
    log.turn("latest", "reply")
    layer = choose_layer(make_target(log), want=10_000)
    assert layer is not None
    assert [i.turn for i in layer.items] == [1, 1, 3, 3]
    assert not any("secret" in transcript_line(i) for i in layer.items)


def test_a_turn_past_the_cap_waits_but_the_first_always_goes(log: Log) -> None:
    for _ in range(4):
        log.turn(words(200), words(200, "beta"))
    target = make_target(log)
    capped = choose_layer(target, want=10_000, cap=500)
    assert capped is not None and {i.turn for i in capped.items} == {1}
    assert capped.tokens > 400
    tiny = choose_layer(target, want=10_000, cap=10)
    assert tiny is not None and {i.turn for i in tiny.items} == {1}


def test_a_tool_pair_and_its_turn_stay_together(log: Log) -> None:
    log.turn("read the config", "done", tool=('{"path": "a.toml"}', words(120)))
    log.turn("thanks", "welcome")
    log.turn("next", "ok")
    layer = choose_layer(make_target(log), want=1)
    assert layer is not None
    assert [i.kind for i in layer.items] == ["user", "tool", "assistant"]
    assert layer.to_seq == log.seqs[1][-1]
    assert "read_file" in transcript_line(layer.items[1])
    assert words(120) in transcript_line(layer.items[1])


def test_a_second_layer_starts_after_the_previous_summary(log: Log) -> None:
    for _ in range(5):
        log.turn(words(50), words(50, "beta"))
    first = log.summary(log.seqs[1][0], log.seqs[2][-1], "turns one and two", open_tasks=("t",))
    log.turn(words(50), "after the summary")
    layer = choose_layer(make_target(log), want=1)
    assert layer is not None and layer.previous is not None
    assert layer.previous.seq == first.seq and layer.previous.open_tasks == ("t",)
    assert layer.from_seq == log.seqs[1][0]  # the range covers the previous summary's
    assert layer.layer_from_seq == log.seqs[3][0]  # the new material starts after it
    assert {i.turn for i in layer.items} == {3}
    assert layer.tokens_before == layer.tokens + layer.previous.tokens


def test_previous_summary_is_the_newest(log: Log) -> None:
    log.turn("a", "b")
    assert previous_summary(make_target(log)) is None
    log.summary(1, 2, "one")
    newest = log.summary(1, 3, "two", previous_summary_seq=4)
    found = previous_summary(make_target(log))
    assert found is not None and found.seq == newest.seq and found.text == "two"


def test_open_tasks_are_opened_and_closed_by_the_user(log: Log) -> None:
    log.turn("TODO: ship v2\nsome text\n- task: write the docs", "sure")
    log.turn("done: ship v2. And Task: fix the CI", "ok")  # not at line start: ignored
    log.turn("DONE: Ship V2\nTODO: fix the CI", "ok")
    log.turn("latest", "ok")
    layer = choose_layer(make_target(log), want=10_000)
    assert layer is not None
    assert layer.open_tasks == ("write the docs", "fix the CI")
    log.summary(1, log.seqs[3][-1], "s", open_tasks=("carried task",))
    log.turn("DONE: carried task", "ok")
    log.turn("latest again", "ok")
    again = choose_layer(make_target(log), want=10_000)
    assert again is not None and again.open_tasks == ()
    assert open_tasks(None, []) == ()


def test_reading_is_bounded_by_the_layer_not_the_session(
    log: Log, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _ in range(300):
        log.turn(words(20), words(20, "beta"))
    target = make_target(log)
    read: list[int] = []
    original = target.events.read

    def counting(**kwargs: object) -> list[StoredEvent]:
        rows = original(**kwargs)  # type: ignore[arg-type]
        read.append(len(rows))
        return rows

    monkeypatch.setattr(target.events, "read", counting)
    layer = choose_layer(target, want=200)
    assert layer is not None and len(layer.items) < 20
    assert sum(read) <= layers.PAGE_SIZE
