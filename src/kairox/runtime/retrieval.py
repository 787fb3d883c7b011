"""Retrieval for a turn: the workspace index and the configured knowledge bases, merged by the
composite retriever and split back into their two context sources. Never writes memory.

Before searching, the workspace index catches up with the files (a stat scan; only changed files
are re-read), so hits never need a manual ``kairox index``; what that did goes in the trace."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kairox.core.errors import KairoxError
from kairox.retrieval.composite import CompositeWorkspaceRetriever, SourceBinding
from kairox.retrieval.types import RetrievalHit
from kairox.retrieval.workspace import WorkspaceRagIndex


@dataclass(frozen=True)
class RetrievalOutcome:
    workspace: tuple[RetrievalHit, ...] = ()
    knowledge_base: tuple[RetrievalHit, ...] = ()
    errors: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())
    floor: float = 0.0
    """Hits scoring under it (recall's too) are in the outcome for the trace only."""


class TurnRetriever:
    def __init__(
        self, bindings: Sequence[SourceBinding], *, max_results: int, min_score: float
    ) -> None:
        self._composite = (
            CompositeWorkspaceRetriever(bindings, max_results=max_results, min_score=min_score)
            if bindings
            else None
        )
        self._indexes = [
            b.retriever for b in bindings if isinstance(b.retriever, WorkspaceRagIndex)
        ]
        self._min_score = min_score

    async def search(self, query: str, *, profile: str) -> RetrievalOutcome:
        if self._composite is None or not query.strip():
            return RetrievalOutcome(floor=self._min_score)  # recall's hits meet it too
        notes: list[str] = []
        errors: list[str] = []
        for index in self._indexes:
            try:
                note = await index.refresh()
            except (KairoxError, OSError) as exc:
                errors.append(f"{index.name}: refresh failed: {exc}")
                continue
            if note:
                notes.append(note)
        result = await self._composite.search(query, profile=profile)
        hits = (*result.hits, *result.below_floor)
        workspace = tuple(h for h in hits if h.source.startswith("workspace:"))
        kb = tuple(h for h in hits if not h.source.startswith("workspace:"))
        errors.extend(f"{e.source}: {e.reason}" for e in result.errors)
        return RetrievalOutcome(
            workspace=workspace,
            knowledge_base=kb,
            errors=tuple(errors),
            notes=tuple(notes),
            floor=result.floor,
        )
