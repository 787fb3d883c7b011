"""The memory search index: memories found by meaning, ranked like workspace passages.

Each live memory's key and body is a unit, ranked with the workspace index's own hybrid code
(``HybridRanker``: in-memory BM25 + the configured embedder) and scored on the same absolute scale
(``kairox.retrieval.relevance``), so ``[retrieval] min_score`` means the same here. The index is
derived from the memory events: before every search it reads the events after its watermark and
re-reads the memories they name, so every proposal, decision, edit, delete and undo, from any
process and on either store, is in step at the next search.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryStatus
from kairox.retrieval.embeddings.base import EmbeddingBackend
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.history import EventReader
from kairox.retrieval.search import HybridRanker
from kairox.store.memory_index import USER_WORKSPACE
from kairox.store.protocols import MemoryIndexStore
from kairox.store.records import MemoryUnit

MEMORY_EVENTS = (
    "MemoryProposed",
    "MemoryAccepted",
    "MemoryRejected",
    "MemoryEdited",
    "MemoryDeleted",
    "MemoryRestored",
)
READ_BATCH = 5000
EMBED_BATCH = 512
"""Units embedded per batch; each batch's vectors are written in one transaction."""

IndexProgress = Callable[[int, int], None]
"""``progress(done, total)`` of a memory index refresh (units embedded of those missing)."""


class RecordReader(Protocol):
    """The part of the memory store the index reads: rows by exact id (no redirects)."""

    def get_many(self, memory_ids: Sequence[str]) -> list[MemoryRecord]: ...


@dataclass(frozen=True, slots=True)
class RankedMemory:
    """A memory id and its absolute score in [0, 1]."""

    memory_id: str
    score: float


def unit_of(record: MemoryRecord) -> MemoryUnit:
    return MemoryUnit(
        memory_id=record.id,
        workspace_id=record.workspace_id or USER_WORKSPACE,
        key=record.key or "",
        body=record.body,
    )


class MemoryIndex:
    """The memory search index of one home, searched with one embedder."""

    def __init__(
        self,
        store: MemoryIndexStore,
        events: EventReader,
        records: RecordReader,
        embedder: EmbeddingBackend,
        *,
        options: SearchOptions | None = None,
    ) -> None:
        self.store = store
        self._events = events
        self._records = records
        self.embedder = embedder
        self._ranker = HybridRanker(store, embedder, options)
        self._lock = threading.Lock()
        self._embedded_at: int | None = None  # the generation at which no vector was missing

    def catch_up(self) -> int:
        """Re-index every memory a memory event named since the last call; returns units changed."""
        changed = 0
        with self._lock:
            last = self.store.last_seq()
            while True:
                batch = self._events.read(after=last, types=MEMORY_EVENTS, limit=READ_BATCH)
                if not batch:
                    return changed
                named: dict[str, None] = {}
                for event in batch:
                    payload = event.payload
                    named[getattr(payload, "memory_id", "")] = None
                    replaced = getattr(payload, "replaced_memory_id", None)
                    if replaced:
                        named[replaced] = None
                named.pop("", None)
                ids = list(named)
                found = {r.id: r for r in self._records.get_many(ids)}
                live = [r for r in found.values() if r.status is not MemoryStatus.DELETED]
                gone = [i for i in ids if i not in found or found[i].status is MemoryStatus.DELETED]
                last = batch[-1].seq
                changed += self.store.apply([unit_of(r) for r in live], gone, last_seq=last)

    def embed_missing(self, progress: IndexProgress | None = None) -> int:
        """Embed the units that have no vector for this embedder yet, ``EMBED_BATCH`` at a time
        in id order (each batch one embedder call and one transaction)."""
        model = self.embedder.model_id
        done = 0
        with self._lock:
            generation = self.store.generation(USER_WORKSPACE)
            if generation == self._embedded_at:
                return 0  # nothing changed since every unit had its vector
            total = self.store.count_missing_vectors(model)
            cursor = 0
            while total > 0:
                batch = self.store.units_missing_vectors(model, limit=EMBED_BATCH, after_id=cursor)
                if not batch:
                    break
                vectors = self.embedder.embed([unit.text for _, unit in batch])
                self.store.put_vectors(model, [i for i, _ in batch], vectors)
                done += len(batch)
                cursor = batch[-1][0]
                if progress is not None:
                    progress(done, max(total, done))
            # Nothing was missing at ``generation``; after writing vectors, count again next time.
            self._embedded_at = None if done else generation
        return done

    def refresh(self, progress: IndexProgress | None = None) -> None:
        """Catch the units up with the memory events, then embed the new ones."""
        self.catch_up()
        self.embed_missing(progress)

    def build(self, workspace_id: str, progress: IndexProgress | None = None) -> None:
        """Bring the index up to date now and save the keyword indexes a search of
        ``workspace_id`` (and of any workspace: the user's memories) loads, so the next
        search or turn, in any process, starts ranking at once (``memory import`` calls it)."""
        self.refresh(progress)
        self._ranker.warm_keywords(USER_WORKSPACE)
        if workspace_id != USER_WORKSPACE:
            self._ranker.warm_keywords(workspace_id)

    def search(
        self,
        query: str,
        *,
        workspace_id: str,
        k: int = 10,
        fusion: FusionMethod | None = None,
        refresh: bool = True,
    ) -> list[RankedMemory]:
        """The user's and ``workspace_id``'s memories (of any session) matching ``query``, best
        first, each with an absolute score; memories with no evidence are left out. The caller
        narrows them to a view, scopes and statuses."""
        if refresh:
            self.refresh()
        if k <= 0 or not query.strip():
            return []
        ranker = self._ranker
        method = ranker.method(fusion)
        depth = max(ranker.options.candidates, k)
        ranked = ranker.rank(workspace_id, query, k=depth, fusion=method)
        units = self.store.get_units([r[0] for r in ranked])
        lexical = (
            ranker.lexical_evidence(workspace_id, query)
            if method is not FusionMethod.VECTOR
            else None
        )
        scale = ranker.evidence(workspace_id, ranker.keyword_terms(workspace_id, query))
        semantic = method is not FusionMethod.BM25
        out: list[RankedMemory] = []
        ceiling = 1.0
        for unit_id, _, _, cosine in ranked:
            unit = units.get(unit_id)
            if unit is None:
                continue
            lex = lexical.of(unit.text) if lexical is not None else 0.0
            score = max(lex, scale.cosine(cosine) if semantic else 0.0)
            if score <= 0.0:
                continue
            ceiling = min(score, ceiling)
            out.append(RankedMemory(unit.memory_id, ceiling))
        return out[:k]

    def close(self) -> None:
        self._ranker.close()
