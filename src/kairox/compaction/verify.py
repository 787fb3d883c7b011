"""Accept a summary only if it helps: it must free tokens and keep every pinned item in context.

Pinned items are the approved memories and the latest user request that the next context holds
now, and every open task the summary prompt was told about. The check assembles the next context
twice, as it is and with the summary in place of its range, using the real assembler. When a
summary is rejected (or the model failed), ``fallback`` builds a deterministic replacement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kairox.compaction.layers import (
    Layer,
    LayerItem,
    open_tasks,
    range_taint,
    read_turns,
    summary_cost,
)
from kairox.compaction.policy import next_prompt_estimate
from kairox.compaction.target import CompactionTarget
from kairox.context.assembler import Assembly
from kairox.context.history import HistoryItem, load_history
from kairox.context.render import summary_message
from kairox.core.errors import ContextOverflow
from kairox.core.events import UntrustedInput
from kairox.core.types import ContextSource

_SPACE = re.compile(r"\s+")
OPEN_TASKS = "Open tasks: "
CANDIDATE_SEQ = 0  # the dry run's stand-in for the summary event, which is not appended yet


@dataclass(frozen=True, slots=True)
class Candidate:
    """A summary ready to append as ``CompactionSummary``."""

    from_seq: int
    to_seq: int
    layer_from_seq: int
    text: str
    tokens_before: int
    tokens_after: int
    open_tasks: tuple[str, ...]
    previous_seq: int | None
    fallback: bool = False
    untrusted_inputs: tuple[UntrustedInput, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    accepted: bool
    reason: str | None = None


def candidate(target: CompactionTarget, layer: Layer, text: str) -> Candidate:
    return Candidate(
        from_seq=layer.from_seq,
        to_seq=layer.to_seq,
        layer_from_seq=layer.layer_from_seq,
        text=text,
        tokens_before=layer.tokens_before,
        tokens_after=summary_cost(target, layer.from_seq, layer.to_seq, text, layer.untrusted),
        open_tasks=layer.open_tasks,
        previous_seq=layer.previous.seq if layer.previous else None,
        untrusted_inputs=layer.untrusted,
    )


def verify(target: CompactionTarget, summary: Candidate) -> Verdict:
    """Whether ``summary`` frees tokens and keeps every pinned item in the next context."""
    if summary.tokens_after >= summary.tokens_before:
        return Verdict(
            False,
            f"the summary frees no tokens ({summary.tokens_after} tokens for "
            f"{summary.tokens_before} replaced)",
        )
    history = load_history(
        target.events, target.session_id, target.tokenizer, max_tokens=target.budget.budget
    )
    memories = target.context_memories()
    try:
        before = target.dry_run(history, memories=memories)
        after = target.dry_run(with_summary(target, history, summary), memories=memories)
    except ContextOverflow as exc:
        return Verdict(False, str(exc))
    included = _included(after)
    note = next(i for i in after.trace.items if i.ref == f"seq:{CANDIDATE_SEQ}")
    if not note.included or note.truncated:
        return Verdict(False, "the summary does not fit whole in the next context")
    for ref in sorted(_included(before) - included):
        if ref.startswith("mem:"):
            return Verdict(False, f"approved memory {ref} would leave the context")
    latest = target.latest("UserMessageAdded")
    if latest is not None and f"seq:{latest.seq}" in _included(before) - included:
        return Verdict(False, "the latest user request would leave the context")
    text = _norm("\n".join(m.content for m in after.messages))
    for task in summary.open_tasks:
        if _norm(task) not in text:
            return Verdict(False, f"open task '{task}' is missing from the summary")
    return Verdict(True)


def with_summary(
    target: CompactionTarget, history: list[HistoryItem], summary: Candidate
) -> list[HistoryItem]:
    """``history`` as it will load once ``summary`` is appended: the note first, then the events
    after its range (every earlier summary is superseded)."""
    note = summary_message(summary.from_seq, summary.to_seq, summary.text, summary.untrusted_inputs)
    item = HistoryItem(
        seq=CANDIDATE_SEQ,
        seqs=(CANDIDATE_SEQ,),
        kind="summary",
        turn=None,
        messages=(note,),
        tokens=summary.tokens_after,
        ts=target.clock.now(),
        replaces=(summary.from_seq, summary.to_seq),
        untrusted=summary.untrusted_inputs,
    )
    kept = [h for h in history if h.kind != "summary" and h.seq > summary.to_seq]
    return [item, *kept]


def fallback(target: CompactionTarget, layer: Layer) -> Candidate:
    """The deterministic replacement: drop the layer, and more if needed so the most recent
    turns fit, and leave a one-line note of what was dropped. The previous summary's text and the
    open tasks are carried over verbatim, so no pinned item is lost."""
    try:
        base = target.dry_run([], prompt=next_prompt_estimate(target)).trace.used
    except ContextOverflow as exc:
        base = exc.required
    first = _fallback_text(layer, layer.items, layer.to_seq, layer.open_tasks)
    cost = summary_cost(target, layer.from_seq, layer.to_seq, first, layer.untrusted)
    room = target.limit - base - cost - 16
    keep_from = _keep_from(target, room)
    to_seq = max(layer.to_seq, keep_from - 1)
    dropped = list(layer.items)
    for group in read_turns(target, after=layer.to_seq, before=to_seq + 1):
        dropped.extend(group)
    tasks = open_tasks(layer.previous, dropped)
    text = _fallback_text(layer, dropped, to_seq, tasks)
    previous_tokens = layer.previous.tokens if layer.previous else 0
    untrusted = (
        layer.untrusted
        if to_seq == layer.to_seq
        else range_taint(target, layer.previous, layer.layer_from_seq, to_seq)
    )
    return Candidate(
        from_seq=layer.from_seq,
        to_seq=to_seq,
        layer_from_seq=layer.layer_from_seq,
        text=text,
        tokens_before=previous_tokens + sum(i.tokens for i in dropped),
        tokens_after=summary_cost(target, layer.from_seq, to_seq, text, untrusted),
        open_tasks=tasks,
        previous_seq=layer.previous.seq if layer.previous else None,
        fallback=True,
        untrusted_inputs=untrusted,
    )


def _keep_from(target: CompactionTarget, room: int) -> int:
    """The first seq of the oldest turn such that it and every later turn fit in ``room``; the
    latest turn is always kept."""
    latest = target.latest("UserMessageAdded")
    assert latest is not None, "a layer exists, so the session has a user message"
    items = load_history(
        target.events, target.session_id, target.tokenizer, max_tokens=max(0, room)
    )
    keep_from = latest.seq
    total = 0
    for item in reversed(items):
        if item.kind == "summary":
            break
        total += item.tokens
        if total > room:
            break
        if item.kind == "user":
            keep_from = min(keep_from, item.seq)
    return keep_from


def _fallback_text(
    layer: Layer, dropped: Sequence[LayerItem], to_seq: int, tasks: tuple[str, ...]
) -> str:
    turns = sorted({i.turn for i in dropped if i.turn is not None})
    span = f"turns {turns[0]}-{turns[-1]}" if turns else "messages"
    tokens = sum(i.tokens for i in dropped)
    lines: list[str] = []
    if layer.previous is not None:  # carried over; its open tasks are listed again below
        kept = layer.previous.text.splitlines()
        if layer.previous.fallback:
            kept = [line for line in kept if not line.startswith(OPEN_TASKS)]
        lines.extend(kept)
    lines.append(
        f"[{span} (events {layer.layer_from_seq}-{to_seq}, {tokens} tokens) dropped without a "
        "summary; raw events kept in the log]"
    )
    if tasks:
        lines.append(OPEN_TASKS + "; ".join(tasks))
    return "\n".join(lines)


def _included(assembly: Assembly) -> set[str]:
    return {
        i.ref
        for i in assembly.trace.items
        if i.included
        and i.source in (ContextSource.MEMORY, ContextSource.HISTORY, ContextSource.SUMMARY)
    }


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()
