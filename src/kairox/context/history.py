"""Conversation history as the assembler sees it: events turned into items with exact token costs.

Items come from cached counts (``event_tokens``), never from re-tokenising the log on the hot path,
and are read newest first in pages, so the cost of a turn does not grow with the session's length.
A compaction summary stands in for the range of events it replaced. A turn that failed before
its reply (a refused prompt, a missing key, a dead endpoint) stays in the log but is no history:
its user message and tool results are never replayed into a later context.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from kairox.context.render import message_cost, summary_message, tool_pair
from kairox.context.tokens import Tokenizer
from kairox.core.events import (
    AssistantMessageCompleted,
    CompactionSummary,
    EventPayload,
    HistoryRewound,
    ToolInvocationCompleted,
    TurnFailed,
    UntrustedInput,
    UserMessageAdded,
    payload_from_json,
)
from kairox.core.messages import ChatMessage
from kairox.core.types import ContextSource
from kairox.store.events import HistoryRow
from kairox.store.protocols import EventStore

HistoryKind = Literal["user", "assistant", "tool", "summary"]
HISTORY_TYPES = (
    "UserMessageAdded",
    "AssistantMessageCompleted",
    "ToolInvocationCompleted",
    "CompactionSummary",
    "TurnFailed",
    "HistoryRewound",
)
PAGE_SIZE = 256
PARSE_CHUNK = 32


@dataclass(frozen=True, slots=True)
class HistoryItem:
    """One unit of history that goes in whole or not at all (a tool call and its result are one).

    ``tokens`` is exactly what the item's messages add to ``Tokenizer.count_messages``.
    ``seq`` is the event behind the item (for a summary, the ``CompactionSummary`` event), and
    ``replaces`` is the seq range a summary stands in for.
    """

    seq: int
    seqs: tuple[int, ...]
    kind: HistoryKind
    turn: int | None
    messages: tuple[ChatMessage, ...]
    tokens: int
    ts: datetime
    replaces: tuple[int, int] | None = None
    untrusted: tuple[UntrustedInput, ...] = ()
    """What a summary carries on from the untrusted text of the range it replaces."""

    @property
    def ref(self) -> str:
        return f"seq:{self.seq}"

    @property
    def source(self) -> ContextSource:
        return ContextSource.SUMMARY if self.kind == "summary" else ContextSource.HISTORY


def chat_counter_name(tokenizer: Tokenizer) -> str:
    """The ``event_tokens`` key under which an item's full chat cost is cached, for items whose
    messages differ from the event's text (tool pairs and summaries)."""
    return f"{tokenizer.name}+chat"


def item_messages(payload: EventPayload) -> tuple[HistoryKind, tuple[ChatMessage, ...]] | None:
    """The messages an event contributes to history; None for events that are not history."""
    if isinstance(payload, UserMessageAdded):
        return "user", (ChatMessage(role="user", content=payload.text),)
    if isinstance(payload, AssistantMessageCompleted):
        text = payload.message_text() or ""  # a cut or looping reply up to its first repeat
        if not text:
            return None  # a reply that was only tool calls: the pairs carry it
        return "assistant", (ChatMessage(role="assistant", content=text),)
    if isinstance(payload, ToolInvocationCompleted):
        return "tool", tool_pair(payload.call_id, payload.name, payload.arguments, payload.result)
    if isinstance(payload, CompactionSummary):
        note = summary_message(
            payload.from_seq, payload.to_seq, payload.text, payload.untrusted_inputs
        )
        return "summary", (note,)
    return None


@dataclass(slots=True)
class _Row:
    seq: int
    ts: datetime
    payload: EventPayload
    kind: HistoryKind
    messages: tuple[ChatMessage, ...]
    tokens: int | None  # cached count of message_text under the tokenizer
    chat_tokens: int | None  # cached full chat cost (tool pairs, summaries)

    @property
    def position(self) -> int:
        """Where the item sits in the conversation: a summary sits where its range ended."""
        if isinstance(self.payload, CompactionSummary):
            return self.payload.to_seq
        return self.seq


class _CostCounter:
    """Feeds precomputed item costs to ``EventStore.token_counts`` so they get cached.

    The store hands ``count`` an event's ``message_text``, so each text maps to one cost.
    """

    def __init__(self, name: str, costs: dict[str, int]) -> None:
        self._name = name
        self._costs = costs

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return self._costs[text]


def load_history(
    events: EventStore,
    session_id: str,
    tokenizer: Tokenizer,
    *,
    until_seq: int | None = None,
    max_tokens: int | None = None,
) -> list[HistoryItem]:
    """History items of a session up to ``until_seq`` (inclusive), oldest first.

    With ``max_tokens``, events are read newest first in pages and reading stops at the first
    item that takes the total past ``max_tokens`` (that item is returned too, as the one at the
    cut). Without it the whole session is read. Ranges replaced by a summary are skipped in SQL.
    """
    out: list[HistoryItem] = []
    failed: set[int] = set()  # turns that ended with TurnFailed before their reply
    hidden: list[tuple[int, int]] = []  # ranges replaced by a summary, and superseded summaries
    pending: list[_Row] = []  # summaries waiting for the scan to reach their position
    total = 0
    cursor = (until_seq + 1) if until_seq is not None else None
    while True:
        raw = _page(events, session_id, tokenizer, before=cursor, limit=PAGE_SIZE)
        jump: int | None = None
        for start in range(0, len(raw), PARSE_CHUNK):  # parse no further than the cut needs
            rows = _rows(raw[start : start + PARSE_CHUNK], failed, hidden)
            sequence, jump = _visible(rows, hidden, pending)
            _fill_missing_counts(events, tokenizer, [*sequence, *pending])
            for row in sequence:
                out.append(_item(row, tokenizer))
                total += out[-1].tokens
                if max_tokens is not None and total > max_tokens:
                    return out[::-1]
            if jump is not None:
                break
        if jump is not None:
            cursor = jump
        elif len(raw) < PAGE_SIZE:
            break
        else:
            cursor = raw[-1].seq
    for row in sorted(pending, key=lambda r: r.position, reverse=True):
        out.append(_item(row, tokenizer))
        total += out[-1].tokens
        if max_tokens is not None and total > max_tokens:
            break
    return out[::-1]


def _visible(
    rows: list[_Row], hidden: list[tuple[int, int]], pending: list[_Row]
) -> tuple[list[_Row], int | None]:
    """The rows of a page that are history, newest first, with due summaries in place.

    Stops at the first row inside a replaced range and returns where to resume (below it).
    """
    sequence: list[_Row] = []
    for row in rows:
        while pending and pending[-1].position >= row.seq:
            sequence.append(pending.pop())
        span = next(((lo, hi) for lo, hi in hidden if lo <= row.seq <= hi), None)
        if span is not None:
            return sequence, span[0]
        payload = row.payload
        if isinstance(payload, CompactionSummary):
            hidden.append((payload.from_seq, payload.to_seq))
            if payload.previous_summary_seq is not None:
                hidden.append((payload.previous_summary_seq, payload.previous_summary_seq))
            pending.append(row)
            pending.sort(key=lambda r: r.position)
            continue
        sequence.append(row)
    return sequence, None


def _item(row: _Row, tokenizer: Tokenizer) -> HistoryItem:
    if row.kind in ("tool", "summary"):
        assert row.chat_tokens is not None
        tokens = row.chat_tokens
    else:
        assert row.tokens is not None
        tokens = row.tokens + tokenizer.message_overhead(row.messages[0])
    payload = row.payload
    replaces, untrusted = (
        ((payload.from_seq, payload.to_seq), payload.untrusted_inputs)
        if isinstance(payload, CompactionSummary)
        else (None, ())
    )
    turn = getattr(payload, "turn", None)
    return HistoryItem(
        seq=row.seq,
        seqs=(row.seq,),
        kind=row.kind,
        turn=turn if isinstance(turn, int) else None,
        messages=row.messages,
        tokens=tokens,
        ts=row.ts,
        replaces=replaces,
        untrusted=untrusted,
    )


def _fill_missing_counts(events: EventStore, tokenizer: Tokenizer, rows: list[_Row]) -> None:
    """Compute and cache the counts these rows lack (a new tokenizer, or a first read)."""
    plain = [r for r in rows if r.kind in ("user", "assistant") and r.tokens is None]
    if plain:
        counts = events.token_counts([r.seq for r in plain], tokenizer)
        for row in plain:
            row.tokens = counts[row.seq]
    rich = [r for r in rows if r.kind in ("tool", "summary") and r.chat_tokens is None]
    if not rich:
        return
    own = {r.seq: sum(message_cost(tokenizer, m) for m in r.messages) for r in rich}
    # The store hands the counter an event's text, not its seq: rows whose text is shared with
    # a row of another cost are cached one by one, so every seq gets its own exact cost.
    by_text: dict[str, list[_Row]] = {}
    for row in rich:
        by_text.setdefault(row.payload.message_text() or "", []).append(row)
    batch: dict[str, int] = {}
    alone: list[tuple[str, _Row]] = []
    for text, group in by_text.items():
        if len({own[r.seq] for r in group}) == 1:
            batch[text] = own[group[0].seq]
        else:
            alone.extend((text, r) for r in group)
    name = chat_counter_name(tokenizer)
    seqs = [r.seq for r in rich if (r.payload.message_text() or "") in batch]
    if seqs:
        events.token_counts(seqs, _CostCounter(name, batch))
    for text, row in alone:
        events.token_counts([row.seq], _CostCounter(name, {text: own[row.seq]}))
    for row in rich:
        row.chat_tokens = own[row.seq]


def _page(
    events: EventStore,
    session_id: str,
    tokenizer: Tokenizer,
    *,
    before: int | None,
    limit: int,
) -> list[HistoryRow]:
    """Up to ``limit`` history events with seq < ``before``, newest first, with cached counts."""
    return events.history_page(
        session_id,
        HISTORY_TYPES,
        counter=tokenizer.name,
        chat_counter=chat_counter_name(tokenizer),
        before=before,
        limit=limit,
    )


def _rows(raw: list[HistoryRow], failed: set[int], hidden: list[tuple[int, int]]) -> list[_Row]:
    """History rows of a page read newest first. ``failed`` collects the turns whose
    ``TurnFailed`` was seen without a completed reply after it; their rows are skipped.
    A ``HistoryRewound`` adds the range it removed to ``hidden`` (rows below it come later)."""
    rows: list[_Row] = []
    for r in raw:
        payload = payload_from_json(r.payload_json)
        if isinstance(payload, HistoryRewound):
            hidden.append((payload.from_seq, payload.to_seq))
            continue
        if isinstance(payload, TurnFailed):
            failed.add(payload.turn)
            continue
        if isinstance(payload, AssistantMessageCompleted):
            failed.discard(payload.turn)  # the reply came: a later failure is not this turn's
        elif isinstance(payload, UserMessageAdded | ToolInvocationCompleted) and (
            payload.turn in failed
        ):
            continue
        made = item_messages(payload)
        if made is None:
            continue
        rows.append(
            _Row(
                seq=r.seq,
                ts=r.ts,
                payload=payload,
                kind=made[0],
                messages=made[1],
                tokens=r.tokens,
                chat_tokens=r.chat_tokens,
            )
        )
    return rows


def tool_item(
    seq: int, ts: datetime, payload: ToolInvocationCompleted, tokenizer: Tokenizer
) -> HistoryItem:
    """A tool round of the turn in progress, counted exactly (it is not cached yet)."""
    messages = tool_pair(payload.call_id, payload.name, payload.arguments, payload.result)
    return HistoryItem(
        seq=seq,
        seqs=(seq,),
        kind="tool",
        turn=payload.turn,
        messages=messages,
        tokens=sum(message_cost(tokenizer, m) for m in messages),
        ts=ts,
    )


def rewound_seqs(events: EventStore, session_id: str, *, until_seq: int | None) -> set[int]:
    """The seqs that ``HistoryRewound`` events up to ``until_seq`` took out of the session's
    history (recall leaves them out too)."""
    found: set[int] = set()
    for event in events.read(session_id=session_id, types=["HistoryRewound"], until=until_seq):
        payload = event.payload
        if isinstance(payload, HistoryRewound):
            taken = events.read(
                session_id=session_id, after=payload.from_seq - 1, until=payload.to_seq
            )
            found.update(e.seq for e in taken)
    return found
