"""What a recall search returns, and what it reads besides the ranking to return it.

A search names its hits' units, their sessions' names and the turns that failed. None of it is
read from the store per search when it can be kept: a unit never changes once indexed and a
session keeps its name, so the units a search returns are kept (the most recent
``ROW_CACHE``; a unit not kept is read with the others a search misses, in one statement), and
the failed turns are read from the log once and then caught up from the events the history
index reads anyway (``FailedTurns``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from kairox.core.clock import isoformat, parse_iso
from kairox.core.events import StoredEvent, TurnFailed
from kairox.retrieval.types import snippet_of
from kairox.store.protocols import HistoryStore
from kairox.store.records import HistoryUnit

ROW_CACHE = 4096
"""Units (with their session's name and time) a history index keeps after returning them."""
NAME_CACHE = 10_000
"""Session names a history index keeps; past it the cache starts again."""


class FailureReader(Protocol):
    """The part of the event store ``FailedTurns`` reads: ``TurnFailed`` events in a range."""

    def read(
        self,
        *,
        after: int = 0,
        types: Sequence[str] | None = None,
        until: int | None = None,
    ) -> list[StoredEvent]: ...


class HistoryHit(NamedTuple):
    """A recalled event: where it was said, by whom, when, and how well it matched. A named
    tuple, immutable like a frozen dataclass at a fifth of its construction cost (a search
    builds one per hit)."""

    seq: int
    session_id: str
    session: str
    turn: int | None
    role: str
    speaker: str
    ts: datetime
    text: str
    score: float
    bm25: float | None
    cosine: float | None

    def snippet(self, width: int = 160) -> str:
        return snippet_of(self.text, width)

    @property
    def date(self) -> str:
        return self.ts.strftime("%Y-%m-%d %H:%M UTC")

    def to_json(self) -> dict[str, object]:
        """The one JSON shape of a recall hit (``kairox recall --json``, the web API)."""
        return {
            "seq": self.seq,
            "session": self.session,
            "turn": self.turn,
            "role": self.role,
            "speaker": self.speaker,
            "time": isoformat(self.ts),
            "score": round(self.score, 6),
            "snippet": self.snippet(),
        }


@dataclass(frozen=True, slots=True)
class HitRow:
    """A unit as a hit shows it: the unit, its session's name and its time."""

    unit: HistoryUnit
    session: str
    ts: datetime


class HitRows:
    """The units searches return, kept (least recently returned first out) with their session
    names: a search reads from the store only the units it has not returned lately."""

    def __init__(self, store: HistoryStore, limit: int = ROW_CACHE) -> None:
        self._store = store
        self._limit = limit
        self._rows: OrderedDict[int, HitRow] = OrderedDict()
        self._names: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, ids: Sequence[int]) -> dict[int, HitRow]:
        """The rows of these unit ids (an id the store does not hold is left out)."""
        found: dict[int, HitRow] = {}
        missing: list[int] = []
        with self._lock:
            rows = self._rows
            for unit_id in ids:
                row = rows.get(unit_id)
                if row is None:
                    missing.append(unit_id)
                else:
                    rows.move_to_end(unit_id)
                    found[unit_id] = row
        if not missing:
            return found
        units = self._store.get_units(missing)
        names = self._session_names({u.session_id for u in units})
        fresh = {
            u.id: HitRow(u, names.get(u.session_id, u.session_id), parse_iso(u.ts)) for u in units
        }
        with self._lock:
            self._rows.update(fresh)
            while len(self._rows) > self._limit:
                self._rows.popitem(last=False)
        found.update(fresh)
        return found

    def _session_names(self, session_ids: Iterable[str]) -> dict[str, str]:
        with self._lock:
            known = self._names
            wanted = [sid for sid in session_ids if sid not in known]
        if wanted:
            names = self._store.session_names(sorted(wanted))
            with self._lock:
                if len(self._names) + len(names) > NAME_CACHE:
                    self._names = {}
                self._names.update(names)
                known = self._names
        return known


class FailedTurns:
    """The (session, turn) pairs whose turn ended in ``TurnFailed``: such a turn is never
    replayed, summarised or recalled. Read from the log up to the history index's watermark
    once, then kept up from the events its catch-up reads; when the watermark moved without
    this index (another process caught up), the events in between are read again."""

    TYPE = "TurnFailed"

    def __init__(self, events: FailureReader) -> None:
        self._events = events
        self._turns: set[tuple[str, int]] = set()
        self._known_to = -1  # the log seq up to which every failure is in ``_turns``

    def __contains__(self, key: tuple[str, int | None]) -> bool:
        return key in self._turns

    def read_to(self, seq: int) -> None:
        """Know every failure up to ``seq`` (the index's watermark); the caller serialises."""
        if self._known_to < seq:
            failures = self._events.read(after=max(self._known_to, 0), types=[self.TYPE], until=seq)
            for event in failures:
                self.note(event)
            self._known_to = seq

    def note(self, event: StoredEvent) -> bool:
        """Keep ``event`` when it is a failure; True when it was one."""
        if not isinstance(event.payload, TurnFailed):
            return False
        if event.session_id is not None:
            self._turns.add((event.session_id, event.payload.turn))
        return True

    def known_to(self, seq: int) -> None:
        """Every failure up to ``seq`` has been noted (by the catch-up that read to it)."""
        self._known_to = max(self._known_to, seq)
