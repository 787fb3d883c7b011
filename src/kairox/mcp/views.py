"""The JSON the MCP tools and resources answer with, built from the facade's records."""

from __future__ import annotations

from kairox.core.events import ContextAssembled
from kairox.core.records import MemoryRecord
from kairox.mcp.schemas import ContextPreview, ContextSourceUse, ProposedMemory


def proposed(record: MemoryRecord, *, duplicate: bool) -> ProposedMemory:
    return ProposedMemory(**dict(record), duplicate=duplicate)


def preview_of(session: str, trace: ContextAssembled, *, turn: int | None) -> ContextPreview:
    """A context by source: the tokens each source's included items take, and their refs."""
    sources: dict[str, ContextSourceUse] = {}
    for item in trace.items:
        if not item.included:
            continue
        name = item.source.value
        use = sources.get(name) or ContextSourceUse(source=name, tokens=0, items=[])
        sources[name] = use.model_copy(
            update={"tokens": use.tokens + item.tokens, "items": [*use.items, item.ref]}
        )
    return ContextPreview(
        session=session,
        turn=turn,
        model=trace.model,
        budget=trace.budget,
        used=trace.used,
        sources=list(sources.values()),
    )
