"""What to compact: the oldest layer of history not yet summarised, plus the previous summary.

Summaries chain: each new one covers the previous summary's range and its own layer, so the
assembler needs only the newest one. The layer is read forward from where the previous summary
ended, whole turns at a time, and reading stops once the layer is big enough, so the work is
bounded by the layer, never by the session's length. A tool call and its result are one event,
and layers end on turn boundaries, so no pair is ever split. The latest turn is never summarised.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from kairox.compaction.target import CompactionTarget
from kairox.context.history import item_messages, rewound_seqs
from kairox.context.render import message_cost, summary_message
from kairox.context.taint import RANGE_TYPES, once, untrusted_in_range
from kairox.core.events import (
    AssistantMessageCompleted,
    CompactionSummary,
    EventPayload,
    StoredEvent,
    ToolInvocationCompleted,
    TurnFailed,
    UntrustedInput,
    UserMessageAdded,
)

PAGE_SIZE = 128
LAYER_TYPES = ("UserMessageAdded", "AssistantMessageCompleted", "ToolInvocationCompleted")
ItemKind = Literal["user", "assistant", "tool"]

_TASK = re.compile(r"^\s*(?:[-*]\s*)?(?:todo|task)\s*:\s*(?P<task>\S.*?)\s*$", re.I | re.M)
_DONE = re.compile(r"^\s*(?:[-*]\s*)?done\s*:\s*(?P<task>\S.*?)\s*$", re.I | re.M)


@dataclass(frozen=True, slots=True)
class PreviousSummary:
    seq: int
    from_seq: int
    to_seq: int
    text: str
    tokens: int  # what the note costs in context
    open_tasks: tuple[str, ...]
    fallback: bool
    untrusted: tuple[UntrustedInput, ...] = ()


@dataclass(frozen=True, slots=True)
class LayerItem:
    seq: int
    turn: int | None
    kind: ItemKind
    payload: EventPayload
    tokens: int  # exactly what the item costs as history


@dataclass(frozen=True, slots=True)
class Layer:
    """A layer to summarise. The replaced range runs from the previous summary's start (summaries
    chain) to the layer's last event; ``layer_from_seq`` is where the new material starts."""

    previous: PreviousSummary | None
    items: tuple[LayerItem, ...]
    open_tasks: tuple[str, ...]
    untrusted: tuple[UntrustedInput, ...] = ()
    """What the summary inherits: everything untrusted in the replaced range."""

    @property
    def from_seq(self) -> int:
        return self.previous.from_seq if self.previous else self.items[0].seq

    @property
    def layer_from_seq(self) -> int:
        return self.items[0].seq

    @property
    def to_seq(self) -> int:
        return self.items[-1].seq

    @property
    def tokens(self) -> int:
        return sum(i.tokens for i in self.items)

    @property
    def tokens_before(self) -> int:
        """What the replaced context costs now: the layer plus the previous summary."""
        return self.tokens + (self.previous.tokens if self.previous else 0)

    @property
    def turns(self) -> tuple[int, int] | None:
        numbers = [i.turn for i in self.items if i.turn is not None]
        return (min(numbers), max(numbers)) if numbers else None


def summary_cost(
    target: CompactionTarget,
    from_seq: int,
    to_seq: int,
    text: str,
    untrusted: tuple[UntrustedInput, ...] = (),
) -> int:
    """What a summary note costs in context, exactly as the history loader counts it."""
    return message_cost(target.tokenizer, summary_message(from_seq, to_seq, text, untrusted))


def range_taint(
    target: CompactionTarget, previous: PreviousSummary | None, from_seq: int, to_seq: int
) -> tuple[UntrustedInput, ...]:
    """The taint a summary replacing ``from_seq..to_seq`` (and ``previous``) inherits."""
    events = target.events.read(
        after=from_seq - 1, until=to_seq, session_id=target.session_id, types=RANGE_TYPES
    )
    return tuple(once([*(previous.untrusted if previous else ()), *untrusted_in_range(events)]))


def previous_summary(target: CompactionTarget) -> PreviousSummary | None:
    event = target.latest("CompactionSummary")
    if event is None or not isinstance(event.payload, CompactionSummary):
        return None
    p = event.payload
    return PreviousSummary(
        seq=event.seq,
        from_seq=p.from_seq,
        to_seq=p.to_seq,
        text=p.text,
        tokens=summary_cost(target, p.from_seq, p.to_seq, p.text, p.untrusted_inputs),
        open_tasks=p.open_tasks,
        fallback=p.fallback,
        untrusted=p.untrusted_inputs,
    )


def read_turns(target: CompactionTarget, *, after: int, before: int) -> Iterator[list[LayerItem]]:
    """History items with ``after < seq < before``, oldest first, grouped by turn (items a
    ``HistoryRewound`` took out of the history are left out here too)."""
    rewound = rewound_seqs(target.events, target.session_id, until_seq=None)
    group: list[LayerItem] = []
    failed: set[int] = set()  # turns that ended with TurnFailed before a reply: not history
    replied: set[int] = set()
    cursor = after
    while True:
        events = target.events.read(
            after=cursor,
            until=before - 1,
            session_id=target.session_id,
            types=(*LAYER_TYPES, "TurnFailed"),
            limit=PAGE_SIZE,
        )
        for event in events:
            if isinstance(event.payload, TurnFailed):
                failed.add(event.payload.turn)
            elif isinstance(event.payload, AssistantMessageCompleted):
                replied.add(event.payload.turn)
        for item in _items(target, [e for e in events if e.seq not in rewound]):
            if item.kind == "user" and group:
                if not _failed(group, failed, replied):
                    yield group
                group = []
            group.append(item)
        if len(events) < PAGE_SIZE:
            break
        cursor = events[-1].seq
    if group and not _failed(group, failed, replied):
        yield group


def _failed(group: list[LayerItem], failed: set[int], replied: set[int]) -> bool:
    turn = group[0].turn
    return turn is not None and turn in failed and turn not in replied


def choose_layer(target: CompactionTarget, *, want: int, cap: int | None = None) -> Layer | None:
    """The oldest unsummarised whole turns, at least one, until they hold ``want`` tokens; a turn
    that would take the layer past ``cap`` is left for later. None when nothing can be compacted
    (no earlier turn than the latest)."""
    previous = previous_summary(target)
    latest = target.latest("UserMessageAdded")
    if latest is None:
        return None
    after = previous.to_seq if previous else 0
    chosen: list[LayerItem] = []
    total = 0
    for group in read_turns(target, after=after, before=latest.seq):
        size = sum(i.tokens for i in group)
        if chosen and cap is not None and total + size > cap:
            break
        chosen.extend(group)
        total += size
        if total >= want:
            break
    if not chosen:
        return None
    return Layer(
        previous=previous,
        items=tuple(chosen),
        open_tasks=open_tasks(previous, chosen),
        untrusted=range_taint(target, previous, chosen[0].seq, chosen[-1].seq),
    )


def open_tasks(previous: PreviousSummary | None, items: list[LayerItem]) -> tuple[str, ...]:
    """Tasks the user opened (``TODO: ...`` or ``Task: ...`` lines) and has not closed with
    ``DONE: ...``: the previous summary's, then the layer's, in order."""
    tasks: dict[str, str] = {t.casefold(): t for t in (previous.open_tasks if previous else ())}
    for item in items:
        if not isinstance(item.payload, UserMessageAdded):
            continue
        text = item.payload.text
        marks = [(m.start(), True, m["task"]) for m in _TASK.finditer(text)]
        marks += [(m.start(), False, m["task"]) for m in _DONE.finditer(text)]
        for _pos, opened, task in sorted(marks):
            if opened:
                tasks.setdefault(task.casefold(), task)
            else:
                tasks.pop(task.casefold(), None)
    return tuple(tasks.values())


def transcript_line(item: LayerItem) -> str:
    """How one item reads in the summariser's input."""
    payload = item.payload
    if isinstance(payload, UserMessageAdded):
        return f"[user, turn {payload.turn}] {payload.text}"
    if isinstance(payload, AssistantMessageCompleted):
        return f"[assistant, turn {payload.turn}] {payload.text}"
    assert isinstance(payload, ToolInvocationCompleted)
    status = "error" if payload.is_error else "result"
    return (
        f"[tool call, turn {payload.turn}] {payload.name}({payload.arguments})\n"
        f"[tool {status}] {payload.result}"
    )


def _items(target: CompactionTarget, events: list[StoredEvent]) -> list[LayerItem]:
    tok = target.tokenizer
    made = [(e, item_messages(e.payload)) for e in events]
    plain = [e.seq for e, m in made if m is not None and m[0] in ("user", "assistant")]
    cached = target.events.token_counts(plain, tok) if plain else {}
    out: list[LayerItem] = []
    for event, messages in made:
        if messages is None or messages[0] == "summary":
            continue
        kind, chat = messages
        if kind == "tool":
            tokens = sum(message_cost(tok, m) for m in chat)
        else:
            tokens = cached[event.seq] + tok.message_overhead(chat[0])
        turn = getattr(event.payload, "turn", None)
        out.append(
            LayerItem(
                seq=event.seq,
                turn=turn if isinstance(turn, int) else None,
                kind="tool" if kind == "tool" else ("user" if kind == "user" else "assistant"),
                payload=event.payload,
                tokens=tokens,
            )
        )
    return out
