"""Replies that repeat themselves: spotting a loop while a reply streams, and where it began.

A small model can fall into saying the same sentence over and over until its length limit. The
local provider stops such a reply (``LoopGuard``) and records why (``finish_reason``); the
history keeps only the text before the first repetition (``first_repetition``), so the loop never
fills later prompts.
"""

from __future__ import annotations

import re
from typing import Literal

FinishReason = Literal["stop", "length", "loop"]
"""Why a reply ended: the model stopped, it hit the reply cap, or it was stopped looping."""

_WORD = re.compile(r"\S+")
_STRIP = re.compile(r"[^\w]+")
MAX_PERIOD = 60  # the longest repeated stretch looked for, in words
MIN_LOOP_WORDS = 15  # a loop spans at least this many words ...
MIN_REPEATS = 3  # ... and at least this many copies of its stretch
NGRAM = 5


def _norm(word: str) -> str:
    return _STRIP.sub("", word.lower()) or word


class LoopGuard:
    """Fed a streamed reply piece by piece; ``looping`` turns True once its tail is the same
    stretch of words repeated (at least ``MIN_REPEATS`` times and ``MIN_LOOP_WORDS`` words)."""

    def __init__(self) -> None:
        self._text = ""
        self._words: list[str] = []
        self.looping = False

    def feed(self, piece: str) -> bool:
        self._text += piece
        # Only whole words count: the last one may still be growing.
        words = [_norm(w) for w in _WORD.findall(self._text)]
        if self._text and not self._text[-1].isspace():
            words = words[:-1]
        if len(words) > len(self._words):
            self._words = words
            self.looping = self.looping or _loops(words)
        return self.looping


def _loops(words: list[str]) -> bool:
    n = len(words)
    for period in range(1, min(MAX_PERIOD, n // MIN_REPEATS) + 1):
        copies = max(MIN_REPEATS, -(-MIN_LOOP_WORDS // period))
        span = period * copies
        if span > n:
            continue
        tail = words[n - span :]
        unit = tail[:period]
        if all(tail[i] == unit[i % period] for i in range(span)):
            return True
    return False


def first_repetition(text: str) -> int:
    """The offset where ``text`` starts repeating itself (the second occurrence of its first
    repeated run of ``NGRAM`` words), or ``len(text)`` when nothing repeats."""
    spans = [(m.start(), _norm(m.group())) for m in _WORD.finditer(text)]
    seen: set[tuple[str, ...]] = set()
    for i in range(len(spans) - NGRAM + 1):
        gram = tuple(w for _, w in spans[i : i + NGRAM])
        if gram in seen:  # the run starting here repeats an earlier one: cut before it
            return spans[i][0]
        seen.add(gram)
    return len(text)


def trim_repetition(text: str) -> str:
    """``text`` up to its first repetition, without trailing space."""
    return text[: first_repetition(text)].rstrip()


def finish_note(reason: FinishReason) -> str | None:
    """The one-line note every surface shows under a cut reply; None for a reply that ended."""
    if reason == "length":
        return "note: the reply was cut at its length limit"
    if reason == "loop":
        return "note: the reply was stopped because it kept repeating itself"
    return None
