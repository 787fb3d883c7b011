"""Which untrusted text was in an assembled context: the provenance of a proposal.

Taint lasts as long as the text is in context, whichever turn it came from. A source is untrusted
by its ``ContextSource`` value (workspace chunks, knowledge-base hits, recalled text) or, for
history, by its kind (a tool call and its result). A new source joins by adding its value here.
"""

from __future__ import annotations

from collections.abc import Iterable

from kairox.core.events import TraceItem, UntrustedInput, UntrustedKind
from kairox.core.types import ContextSource

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
    seen: set[tuple[str, str]] = set()
    for item in items:
        if not item.included:
            continue
        kind = UNTRUSTED_SOURCES.get(item.source.value)
        if kind is None and item.source is ContextSource.HISTORY:
            kind = UNTRUSTED_HISTORY.get(item.source_name or "")
        if kind is None:
            continue
        ref = item.ref.removeprefix("chunk:")
        if (kind, ref) not in seen:
            seen.add((kind, ref))
            found.append(UntrustedInput(kind=kind, ref=ref))
    return found
