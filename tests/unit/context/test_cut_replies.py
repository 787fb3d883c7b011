"""A looping or cut reply stays whole in the log but enters later prompts only up to its first
repetition; a reply that ended on its own enters whole."""

from __future__ import annotations

from kairox.context.history import item_messages
from kairox.core.events import AssistantMessageCompleted
from kairox.core.repetition import LoopGuard, finish_note, first_repetition, trim_repetition

LOOP = "Nice to meet you, Dana. " + "I'm glad to hear that. " * 40


def test_a_looping_reply_enters_history_up_to_its_first_repetition() -> None:
    looped = AssistantMessageCompleted(turn=1, text=LOOP, model="local", finish_reason="loop")
    kind, (message,) = item_messages(looped)  # type: ignore[misc]
    assert kind == "assistant"
    assert message.content == "Nice to meet you, Dana. I'm glad to hear that."
    assert looped.text == LOOP  # the log keeps it whole
    cut = AssistantMessageCompleted(turn=1, text=LOOP, model="local", finish_reason="length")
    assert cut.message_text() == message.content
    ended = AssistantMessageCompleted(turn=1, text=LOOP, model="local")
    assert ended.message_text() == LOOP and ended.finish_reason == "stop"


def test_first_repetition_and_the_loop_guard() -> None:
    assert trim_repetition("one two three four five six") == "one two three four five six"
    assert first_repetition("a b " * 20) == len("a b ")
    guard = LoopGuard()
    fed = [guard.feed(piece) for piece in ("I'm glad ", "to hear that. ") * 3]
    assert fed[-1] is True and fed[0] is False
    calm = LoopGuard()
    words = ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"]
    assert not any(calm.feed(w + " ") for w in words)


def test_every_cut_reply_has_a_one_line_note() -> None:
    assert finish_note("stop") is None
    assert "length limit" in (finish_note("length") or "")
    assert "repeating" in (finish_note("loop") or "")
