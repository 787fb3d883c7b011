"""The composite retriever: every source the current profile may see, searched at once, merged.

Every source scores on the shared absolute scale of ``kairox.retrieval.relevance`` (clipped to
[0, 1] here), so hits merge by score and one floor (``min_score``) applies to all of them; the
hits under it are returned apart, for the trace. A failing or slow source becomes a
``SourceError`` in the result (for the trace) and never fails the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from kairox.core.errors import InvalidInput, KairoxError
from kairox.retrieval.relevance import clip
from kairox.retrieval.types import RetrievalHit, WorkspaceRetriever

KB_PREFIX = "kb:"


@dataclass(frozen=True, slots=True)
class SourceBinding:
    """A source with its quota ``k`` and the profiles that see it (empty = every profile)."""

    retriever: WorkspaceRetriever
    k: int = 5
    profile_aliases: tuple[str, ...] = ()
    timeout_s: float | None = None
    """Overrides the composite's per-source timeout."""

    def visible_to(self, profile: str) -> bool:
        return not self.profile_aliases or profile in self.profile_aliases


@dataclass(frozen=True, slots=True)
class SourceError:
    source: str
    reason: str


@dataclass(frozen=True, slots=True)
class DuplicateHit:
    """The same text came from two sources; the hit from ``kept`` won on score."""

    kept: str
    dropped: str


@dataclass(frozen=True, slots=True)
class CompositeResult:
    hits: tuple[RetrievalHit, ...]
    errors: tuple[SourceError, ...] = ()
    searched: tuple[str, ...] = ()
    """Names of the sources this profile could see, in binding order."""
    duplicates: tuple[DuplicateHit, ...] = ()
    floor: float = 0.0
    """The relevance floor applied (``min_score``)."""
    below_floor: tuple[RetrievalHit, ...] = ()
    """Hits with some evidence that scored under the floor, best first."""


class CompositeWorkspaceRetriever:
    """Fans a query out to its sources concurrently and merges the normalised hits."""

    def __init__(
        self,
        sources: Sequence[SourceBinding],
        *,
        max_results: int,
        min_score: float = 0.0,
        timeout_s: float = 10.0,
    ) -> None:
        if max_results < 0:
            raise InvalidInput(f"max_results must be 0 or more, not {max_results}")
        if not 0.0 <= min_score <= 1.0:
            raise InvalidInput(f"min_score compares absolute scores: use 0..1, not {min_score}")
        names = [binding.retriever.name for binding in sources]
        if len(set(names)) != len(names):
            raise InvalidInput("two retrieval sources share a name: " + ", ".join(names))
        self._sources = tuple(sources)
        self._max_results = max_results
        self._min_score = min_score
        self._timeout_s = timeout_s

    @property
    def sources(self) -> tuple[SourceBinding, ...]:
        return self._sources

    async def search(self, query: str, *, profile: str) -> CompositeResult:
        visible = [b for b in self._sources if b.visible_to(profile) and b.k > 0]
        searched = tuple(b.retriever.name for b in visible)
        if not query.strip() or not visible or self._max_results == 0:
            return CompositeResult(hits=(), searched=searched, floor=self._min_score)
        outcomes = await asyncio.gather(*(self._one(binding, query) for binding in visible))
        errors = tuple(item for item in outcomes if isinstance(item, SourceError))
        ranked: list[tuple[float, int, int, RetrievalHit]] = []
        for position, outcome in enumerate(outcomes):
            if isinstance(outcome, SourceError):
                continue
            for rank, hit in enumerate(normalise(outcome)):
                ranked.append((-hit.score, position, rank, hit))
        ranked.sort(key=lambda item: item[:3])
        kept: dict[str, RetrievalHit] = {}
        duplicates: list[DuplicateHit] = []
        for _, _, _, hit in ranked:
            key = " ".join(hit.text.split())
            winner = kept.get(key)
            if winner is not None:
                if winner.source != hit.source:
                    duplicates.append(DuplicateHit(kept=winner.source, dropped=hit.source))
                continue
            kept[key] = hit
        hits = [hit for hit in kept.values() if hit.score >= self._min_score]
        below = [hit for hit in kept.values() if 0.0 < hit.score < self._min_score]
        return CompositeResult(
            hits=tuple(hits[: self._max_results]),
            errors=errors,
            searched=searched,
            duplicates=tuple(duplicates),
            floor=self._min_score,
            below_floor=tuple(below[: self._max_results]),
        )

    async def _one(self, binding: SourceBinding, query: str) -> list[RetrievalHit] | SourceError:
        name = binding.retriever.name
        timeout = binding.timeout_s if binding.timeout_s is not None else self._timeout_s
        try:
            async with asyncio.timeout(timeout):
                hits = await binding.retriever.search(query, k=binding.k)
        except TimeoutError:
            return SourceError(name, f"timed out after {timeout:g} s")
        except KairoxError as exc:
            return SourceError(name, str(exc))
        except Exception as exc:
            return SourceError(name, f"{type(exc).__name__}: {exc}")
        return list(hits[: binding.k])


def normalise(hits: Sequence[RetrievalHit]) -> list[RetrievalHit]:
    """Scores clipped to the shared [0, 1] scale, best first; a hit's score never depends on
    the other hits of its query."""
    out = [hit if 0.0 <= hit.score <= 1.0 else hit.model_copy(update={"score": clip(hit.score)})
           for hit in hits]  # fmt: skip
    out.sort(key=lambda hit: -hit.score)
    return out


def split_by_kind(
    hits: Sequence[RetrievalHit],
) -> tuple[list[RetrievalHit], list[RetrievalHit]]:
    """(workspace hits, knowledge-base hits), each in the given order."""
    workspace = [hit for hit in hits if not hit.source.startswith(KB_PREFIX)]
    knowledge = [hit for hit in hits if hit.source.startswith(KB_PREFIX)]
    return workspace, knowledge
