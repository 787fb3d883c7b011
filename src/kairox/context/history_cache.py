"""A session's history kept across turns, so a turn reads and parses only what is new.

``load_history`` reads a session newest first until the budget is filled: at 100k events and a
128k budget that is thousands of rows to fetch and parse on every turn. The session's owner (its
actor) keeps the items of the last load and, on the next, reads only the history events after
the newest it has seen, appends them and drops the oldest items the budget no longer reaches.

The result is always the one ``load_history`` gives (tests check the law on random sessions).
Whatever could change an item already held (a compaction summary, a failed turn, a rewind) makes
the next load a full one, as does a different tokenizer or budget, or a cut below what is held.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kairox.context.history import (
    PAGE_SIZE,
    HistoryItem,
    _fill_missing_counts,
    _item,
    _page,
    _rows,
    load_history,
)
from kairox.context.tokens import Tokenizer
from kairox.core.events import CompactionSummary, HistoryRewound, TurnFailed, payload_from_json
from kairox.store.events import HistoryRow
from kairox.store.protocols import EventStore

FIRST_PAGE = 8  # a turn adds a question, a reply and maybe a few tool rounds


@dataclass(slots=True)
class _Held:
    tokenizer: str
    max_tokens: int
    last_seq: int  # the newest history event seen
    items: list[HistoryItem]  # oldest first, as load_history returns them


class HistoryCache:
    """The history items of one session, caught up from the log on each ``load``."""

    def __init__(self, events: EventStore, session_id: str) -> None:
        self._events = events
        self._session_id = session_id
        self._held: _Held | None = None
        self._lock = threading.Lock()  # a turn and a preview (``Engine.assemble``) may overlap

    def load(
        self, tokenizer: Tokenizer, *, max_tokens: int, until_seq: int | None = None
    ) -> list[HistoryItem]:
        """``load_history(events, session, tokenizer, until_seq=..., max_tokens=...)``."""
        with self._lock:
            return self._load(tokenizer, max_tokens, until_seq)

    def _load(
        self, tokenizer: Tokenizer, max_tokens: int, until_seq: int | None
    ) -> list[HistoryItem]:
        held = self._held
        if held is not None and held.tokenizer == tokenizer.name and held.max_tokens == max_tokens:
            items = self._catch_up(held, tokenizer, until_seq)
            if items is not None:
                return items
        # Load up to the newest history event now, so one appended meanwhile is read next time.
        raw = _page(self._events, self._session_id, tokenizer, before=_before(until_seq), limit=1)
        last_seq = raw[0].seq if raw else 0
        items = load_history(
            self._events, self._session_id, tokenizer, until_seq=last_seq, max_tokens=max_tokens
        )
        self._held = _Held(tokenizer.name, max_tokens, last_seq, items)
        return list(items)

    def _catch_up(
        self, held: _Held, tokenizer: Tokenizer, until_seq: int | None
    ) -> list[HistoryItem] | None:
        """The held items with the new events appended, or None when a full load is needed."""
        if until_seq is not None and until_seq < held.last_seq:
            return None
        new: list[HistoryRow] = []
        before, limit = _before(until_seq), FIRST_PAGE
        while True:  # newest first, in growing pages, down to the newest event already held
            raw = _page(self._events, self._session_id, tokenizer, before=before, limit=limit)
            fresh = [r for r in raw if r.seq > held.last_seq]
            new += fresh
            if len(fresh) < len(raw) or len(raw) < limit:
                break
            if len(new) >= PAGE_SIZE:
                return None  # more new events than a page: read them the usual way
            before, limit = raw[-1].seq, min(4 * limit, PAGE_SIZE)
        for row in new:
            if isinstance(
                payload_from_json(row.payload_json), CompactionSummary | TurnFailed | HistoryRewound
            ):
                return None  # changes what earlier items mean
        rows = _rows(new, set(), [])
        _fill_missing_counts(self._events, tokenizer, rows)
        items = held.items + [_item(row, tokenizer) for row in reversed(rows)]
        total = 0
        start = len(items)
        while start > 0:  # as load_history: stop at the item that passes the budget, keep it
            start -= 1
            total += items[start].tokens
            if total > held.max_tokens:
                break
        held.items = items[start:]
        if new:
            held.last_seq = new[0].seq
        return list(held.items)


def _before(until_seq: int | None) -> int | None:
    return None if until_seq is None else until_seq + 1
