"""When compaction is due: cached counts against threshold x budget."""

from __future__ import annotations

from compaction_log import TOKENIZER, Log, make_target, words

from kairox.compaction.policy import next_prompt_estimate, project, window_changed
from kairox.context.history import load_history
from kairox.core.events import UserMessageAdded
from kairox.core.messages import ChatMessage


def cost(role: str, text: str) -> int:
    message = ChatMessage(role=role, content=text)
    return TOKENIZER.count(text) + TOKENIZER.message_overhead(message)


def test_empty_session_projects_only_the_frame(log: Log) -> None:
    target = make_target(log)
    projection = project(target, prompt="hello")
    assert projection.base == target.dry_run([], prompt="hello").trace.used
    assert projection.history == 0
    assert projection.fits and not projection.due
    assert projection.limit == int(1792 * 0.85)


def test_history_side_is_the_sum_of_item_costs(log: Log) -> None:
    log.turn(words(40), words(60, "beta"))
    log.turn(words(30), words(20, "beta"))
    projection = project(make_target(log), prompt="next")
    expected = cost("user", words(40)) + cost("assistant", words(60, "beta"))
    expected += cost("user", words(30)) + cost("assistant", words(20, "beta"))
    assert projection.history == expected
    assert projection.total == projection.base + expected


def test_due_exactly_when_the_next_turn_passes_the_threshold(log: Log) -> None:
    states: list[tuple[int, bool]] = []
    for _ in range(12):
        log.turn(words(100), words(100, "beta"))
        projection = project(make_target(log))
        states.append((projection.total, projection.due))
    limit = int(1792 * 0.85)
    assert [due for _total, due in states] == [total > limit for total, _due in states]
    first_due = next(i for i, (_t, due) in enumerate(states) if due)
    assert 0 < first_due < 11  # it flips inside the run, and stays due afterwards
    assert all(due for _t, due in states[first_due:])
    relaxed = project(make_target(log, threshold=1.0))
    assert relaxed.limit == 1792


def test_latest_request_stands_in_for_the_next_prompt(log: Log) -> None:
    log.turn("first question", "answer")
    log.turn(words(300), "answer")
    target = make_target(log)
    assert next_prompt_estimate(target) == words(300)
    assert project(target).base == target.dry_run([], prompt=words(300)).trace.used


def test_history_is_read_only_until_the_limit(log: Log) -> None:
    for _ in range(40):
        log.turn(words(100), words(100, "beta"))
    target = make_target(log)
    projection = project(target, prompt="x")
    full = sum(i.tokens for i in load_history(log.services.events, log.session.id, TOKENIZER))
    assert projection.due
    assert projection.history < full
    assert projection.history <= projection.limit - projection.base + cost("assistant", words(100))


def test_window_changed_after_a_switch(log: Log) -> None:
    target = make_target(log)
    assert not window_changed(target)  # no assembly yet
    log.append(target.dry_run([], prompt="hi").trace)
    assert not window_changed(target)
    assert window_changed(make_target(log, window=1024, headroom=128))


def test_a_refused_latest_prompt_does_not_inflate_the_estimate(log: Log) -> None:
    log.turn("short", "ok")
    log.append(UserMessageAdded(turn=2, text=words(5000)))  # refused by the budget guard
    target = make_target(log)
    assert project(target).base == target.dry_run([], prompt="").trace.used
    assert project(target, prompt=words(5000)).base > target.budget.budget
