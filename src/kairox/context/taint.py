"""Which untrusted text was in an assembled context: the provenance of a proposal.

Taint lasts as long as the text is in context, whichever turn it came from. A source is untrusted
by its ``ContextSource`` value (workspace chunks, knowledge-base hits, recalled text) or, for
history, by its kind (a tool call and its result). A new source joins by adding its value here.

Taint is never laundered: a compaction summary inherits everything untrusted in the range it
summarises (``untrusted_in_range``), and a session memory accepted with its taint keeps it; both
carry it on in their trace items (``TraceItem.untrusted_inputs``).
"""

from __future__ import annotations

from collections.abc import Iterable

from kairox.core.events import (
    CompactionSummary,
    ContextAssembled,
    StoredEvent,
    ToolInvocationCompleted,
    TraceItem,
    UntrustedInput,
    UntrustedKind,
)
from kairox.core.types import ContextSource

# The event types ``untrusted_in_range`` reads.
RANGE_TYPES = ("ToolInvocationCompleted", "ContextAssembled", "CompactionSummary")

# ContextSource values whose every included item is untrusted text.
UNTRUSTED_SOURCES: dict[str, UntrustedKind] = {
    "workspace": "workspace_chunk",
    "knowledge_base": "knowledge_base_hit",
    "recall": "recalled_event",
}
# History item kinds (``TraceItem.source_name``) that carry untrusted text.
UNTRUSTED_HISTORY: dict[str, UntrustedKind] = {"tool": "tool_result"}


def untrusted_in_context(items: Iterable[TraceItem]) -> list[UntrustedInput]:
    """Every untrusted item an assembly included, in trace order, each once."""
    found: list[UntrustedInput] = []
    for item in items:
        if not item.included:
            continue
        if item.untrusted_inputs:
            carrier: UntrustedKind = (
                "compaction_summary" if item.source is ContextSource.SUMMARY else "tainted_memory"
            )
            found.append(UntrustedInput(kind=carrier, ref=item.ref.removeprefix("mem:")))
            found.extend(item.untrusted_inputs)
            continue
        kind = UNTRUSTED_SOURCES.get(item.source.value)
        if kind is None and item.source is ContextSource.HISTORY:
            kind = UNTRUSTED_HISTORY.get(item.source_name or "")
        if kind is None:
            continue
        found.append(UntrustedInput(kind=kind, ref=item.ref.removeprefix("chunk:")))
    return once(found)


def untrusted_in_range(events: Iterable[StoredEvent]) -> list[UntrustedInput]:
    """Everything untrusted a range of a session's log held: its tool results, the untrusted
    items in the context of its model calls, and what an earlier summary in it carried."""
    found: list[UntrustedInput] = []
    for event in events:
        payload = event.payload
        if isinstance(payload, ToolInvocationCompleted):
            found.append(UntrustedInput(kind="tool_result", ref=f"seq:{event.seq}"))
        elif isinstance(payload, ContextAssembled):
            found.extend(untrusted_in_context(payload.items))
        elif isinstance(payload, CompactionSummary):
            found.extend(payload.untrusted_inputs)
    return once(found)


def once(inputs: Iterable[UntrustedInput]) -> list[UntrustedInput]:
    """``inputs`` in order, each once."""
    return list(dict.fromkeys(inputs))
