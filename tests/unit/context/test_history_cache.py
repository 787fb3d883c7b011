"""The history cache's law: whatever is appended between turns, ``HistoryCache.load`` gives what
``load_history`` gives, while a turn with nothing structural reads only the new events."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.context.assembly_support import REGISTRY, SESSION, Home, words

from kairox.context.history import load_history
from kairox.context.history_cache import HistoryCache
from kairox.core.events import TurnFailed

TOKENIZER = REGISTRY.get("o200k_base")

# one step between two loads: events to append, then the load's budget and cut
event = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 60)),
    st.tuples(st.just("assistant"), st.integers(0, 60)),
    st.tuples(st.just("tool"), st.integers(1, 80)),
    st.tuples(st.just("failed"), st.just(0)),
    st.tuples(st.just("summary"), st.integers(1, 30)),
)
step = st.tuples(
    st.lists(event, max_size=8), st.sampled_from([60, 150, 400, 10_000]), st.booleans()
)


def apply(home: Home, kind: str, size: int) -> None:
    if kind == "user":
        home.user(words(size))
    elif kind == "assistant":
        home.assistant(words(size, "reply"))
    elif kind == "tool":
        home.tool(words(size, "line"))
    elif kind == "failed":
        home.append(TurnFailed(turn=max(home.turn, 1), reason="boom"))
    else:
        last = home.events.last_seq()
        if last >= 2:
            home.summary(max(1, last - 4), last - 1, words(size, "gist"))


@settings(max_examples=40, deadline=None)
@given(st.lists(step, min_size=1, max_size=10))
def test_cached_loads_equal_load_history(
    steps: list[tuple[list[tuple[str, int]], int, bool]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp), TOKENIZER)
        cache = HistoryCache(home.events, SESSION)
        for appended, budget, cut in steps:
            for kind, size in appended:
                apply(home, kind, size)
            until = home.events.last_seq() if cut else None
            want = load_history(home.events, SESSION, TOKENIZER, until_seq=until, max_tokens=budget)
            assert cache.load(TOKENIZER, max_tokens=budget, until_seq=until) == want
        home.db.close()


class CountingPages:
    """Counts the history rows the store hands out."""

    def __init__(self, home: Home) -> None:
        self.events = home.events
        self.rows = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.events, name)

    def history_page(self, *args: object, **kwargs: object) -> list[object]:
        page = self.events.history_page(*args, **kwargs)  # type: ignore[arg-type]
        self.rows += len(page)
        return page  # type: ignore[return-value]


def test_a_turn_reads_only_the_new_events(tmp_path: Path) -> None:
    home = Home(tmp_path, TOKENIZER)
    for i in range(300):
        home.user(words(20, f"q{i}"))
        home.assistant(words(20, f"a{i}"))
    counting = CountingPages(home)
    cache = HistoryCache(counting, SESSION)  # type: ignore[arg-type]
    first = cache.load(TOKENIZER, max_tokens=100_000)
    assert len(first) == 600 and counting.rows >= 600
    counting.rows = 0
    home.user("one more question")
    home.assistant("one more answer")
    second = cache.load(TOKENIZER, max_tokens=100_000)
    assert second == load_history(home.events, SESSION, TOKENIZER, max_tokens=100_000)
    assert len(second) == 602 and counting.rows <= 8  # one small page
