"""Surface-neutral views of a ``ContextAssembled`` trace: the ``kairox context`` JSON and a plain
terminal bar chart of the budget by source. Surfaces print these; they never re-derive figures.
"""

from __future__ import annotations

from typing import TypedDict

from kairox.context.assembler import BELOW_FLOOR
from kairox.core.events import ContextAssembled, TraceItem
from kairox.core.types import ContextSource

SOURCE_ORDER = (
    ContextSource.SYSTEM,
    ContextSource.MEMORY,
    ContextSource.WORKSPACE,
    ContextSource.KNOWLEDGE_BASE,
    ContextSource.RECALL,
    ContextSource.SUMMARY,
    ContextSource.HISTORY,
    ContextSource.PROMPT,
)
SOURCE_LABELS = {
    ContextSource.SYSTEM: "system",
    ContextSource.MEMORY: "memory",
    ContextSource.WORKSPACE: "workspace",
    ContextSource.KNOWLEDGE_BASE: "knowledge base",
    ContextSource.RECALL: "recall",
    ContextSource.SUMMARY: "summary",
    ContextSource.HISTORY: "history",
    ContextSource.PROMPT: "prompt",
}
RETRIEVED = (ContextSource.WORKSPACE, ContextSource.KNOWLEDGE_BASE)  # the floor judges these
FULL = "█"
EMPTY = "░"


class TraceItemJson(TypedDict):
    source: str
    ref: str
    tokens: int
    included: bool
    reason: str | None
    truncated: bool
    source_name: str | None
    dropped_tokens: int | None
    untrusted_inputs: list[dict[str, str]]


class TraceJson(TypedDict):
    turn: int
    model: str
    tokenizer: str
    estimated: bool
    window: int
    headroom: int
    budget: int
    used: int
    free: int
    by_source: dict[str, int]
    items: list[TraceItemJson]
    retrieval_errors: list[str]
    retrieval_notes: list[str]
    relevance_floor: float
    below_floor: int


def item_json(item: TraceItem) -> TraceItemJson:
    return {
        "source": item.source.value,
        "ref": item.ref,
        "tokens": item.tokens,
        "included": item.included,
        "reason": item.reason,
        "truncated": item.truncated,
        "source_name": item.source_name,
        "dropped_tokens": item.dropped_tokens,
        "untrusted_inputs": [u.model_dump(mode="json") for u in item.untrusted_inputs],
    }


def trace_json(trace: ContextAssembled) -> TraceJson:
    """The ``kairox context --json`` document: budget, used, tokenizer, estimated, by_source,
    items[] (each candidate by reference, in request order), plus window, headroom and turn."""
    return {
        "turn": trace.turn,
        "model": trace.model,
        "tokenizer": trace.tokenizer,
        "estimated": trace.estimated,
        "window": trace.window,
        "headroom": trace.headroom,
        "budget": trace.budget,
        "used": trace.used,
        "free": max(0, trace.budget - trace.used),
        "by_source": {s.value: trace.by_source.get(s, 0) for s in SOURCE_ORDER},
        "items": [item_json(i) for i in trace.items],
        "retrieval_errors": list(trace.retrieval_errors),
        "retrieval_notes": list(trace.retrieval_notes),
        "relevance_floor": trace.relevance_floor,
        "below_floor": below_floor(trace),
    }


def below_floor(trace: ContextAssembled) -> int:
    """How many retrieval hits scored under the relevance floor (traced, left out)."""
    return sum(1 for i in trace.items if not i.included and i.reason == BELOW_FLOOR)


def floor_line(trace: ContextAssembled) -> str | None:
    """The relevance floor and how many hits fell under it, said whenever retrieval searched
    (also when none fell: that is what tells a reader the floor took nothing away)."""
    hits = sum(1 for i in trace.items if i.source in RETRIEVED)
    if not hits and trace.relevance_floor <= 0:
        return None
    fell = below_floor(trace)
    return (
        f"relevance floor {trace.relevance_floor:.2f}: "
        f"{fell} of {hits} retrieval hit{'s' if hits != 1 else ''} fell under it"
    )


def _bar(tokens: int, budget: int, width: int) -> str:
    cells = round(tokens * width / budget) if budget > 0 else 0
    if tokens > 0:
        cells = max(cells, 1)
    cells = min(cells, width)
    return FULL * cells + " " * (width - cells)


def _pct(tokens: int, budget: int) -> str:
    return f"{100 * tokens / budget:5.1f}%" if budget > 0 else "  n/a"


def bar_chart(trace: ContextAssembled, *, width: int = 40) -> str:
    """A plain-text chart: one bar per source, scaled to the budget, then the free space."""
    estimated = " (estimated counts)" if trace.estimated else ""
    lines = [
        f"turn {trace.turn} · {trace.model} · tokenizer {trace.tokenizer}{estimated}",
        f"window {trace.window:,} - headroom {trace.headroom:,} = budget {trace.budget:,}; "
        f"used {trace.used:,} ({_pct(trace.used, trace.budget).strip()})",
    ]
    label_width = max(len(label) for label in SOURCE_LABELS.values())
    for source in SOURCE_ORDER:
        tokens = trace.by_source.get(source, 0)
        lines.append(
            f"{SOURCE_LABELS[source]:<{label_width}} {_bar(tokens, trace.budget, width)} "
            f"{tokens:>9,} {_pct(tokens, trace.budget)}"
        )
    free = max(0, trace.budget - trace.used)
    cells = min(width, round(free * width / trace.budget)) if trace.budget > 0 else 0
    lines.append(
        f"{'free':<{label_width}} {EMPTY * cells}{' ' * (width - cells)} "
        f"{free:>9,} {_pct(free, trace.budget)}"
    )
    included = sum(1 for i in trace.items if i.included)
    truncated = sum(1 for i in trace.items if i.included and i.truncated)
    left_out = len(trace.items) - included
    lines.append(f"items: {included} included ({truncated} truncated), {left_out} left out")
    reasons: dict[str, int] = {}
    for item in trace.items:
        if not item.included and item.reason:
            reasons[item.reason] = reasons.get(item.reason, 0) + 1
    for reason, count in sorted(reasons.items()):
        lines.append(f"  {count} {reason}")
    for error in trace.retrieval_errors:
        lines.append(f"retrieval error: {error}")
    for note in trace.retrieval_notes:
        lines.append(f"retrieval: {note}")
    floor = floor_line(trace)
    if floor is not None:
        lines.append(floor)
    return "\n".join(lines)
