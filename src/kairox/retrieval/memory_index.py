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

import numpy as np

from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryStatus
from kairox.retrieval.embeddings import is_lexical
from kairox.retrieval.embeddings.base import EmbeddingBackend
from kairox.retrieval.fusion import Evidence, FusionMethod, Ranked, SearchOptions, fuse
from kairox.retrieval.history import EventReader
from kairox.retrieval.search import HybridRanker
from kairox.retrieval.vectors import row_dots
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


class MemoryRanker(HybridRanker):
    """The hybrid ranking over memory units. With a lexical embedder (``hashing``) under
    lexical-first fusion, cosines only break ties among the keyword candidates and a unit the
    keywords miss scores nothing on the vector side (``cosine_scale``: no evidence), so only the
    candidates' vectors are read: never the whole matrix (200,000 vectors are 300 MB, read again
    by every fresh process). Its fill-ins, the units sharing a word with the query that the rarer
    words did not gather, come from the keyword index with every word gathering."""

    store: MemoryIndexStore

    def ranked(
        self,
        scope: str,
        query: str,
        terms: list[str],
        scale: Evidence,
        depth: int,
        method: FusionMethod,
        *,
        want: int | None = None,
        fill_ins: bool = True,
    ) -> Ranked:
        if method is not FusionMethod.LEXICAL_FIRST or not is_lexical(self.embedder):
            return super().ranked(
                scope, query, terms, scale, depth, method, want=want, fill_ins=fill_ins
            )
        keyword = self._keyword(scope, terms, depth)
        fill: list[tuple[int, float]] = []
        if terms and len(keyword) < depth:
            stems = self._stemmer.stems(terms)
            with self._keyword_lock:
                every = self._keyword_index(scope).search(stems, depth)
            seen = {cid for cid, _ in keyword}
            fill = [(cid, s) for cid, s in every if cid not in seen][: depth - len(keyword)]
        wanted = [cid for cid, _ in keyword] + [cid for cid, _ in fill]
        ids, cosines = self._cosines_of(scope, query, wanted)
        found = dict(zip(ids.tolist(), cosines.tolist(), strict=True))
        vector = sorted(
            ((cid, found[cid]) for cid, _ in fill if cid in found), key=lambda h: (-h[1], h[0])
        )
        boost = self.boosts(scope, terms, wanted)
        return fuse(method, keyword, vector, ids, cosines, self.options, scale, boost, want)

    def _cosines_of(
        self, scope: str, query: str, wanted: list[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(ascending ids, cosines with the query) of the ``wanted`` units that have a vector
        of this embedder, read from the store by id."""
        none = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        if not wanted:
            return none
        found = self.store.load_vectors_of(scope, self.embedder.model_id, wanted)
        if found is None or not len(found[0]):
            return none
        ids, vectors = found
        asked = self.embedder.embed([query])[0]
        if asked.shape[0] != vectors.shape[1]:
            return none
        return ids, row_dots(vectors, asked)


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
        self._ranker = MemoryRanker(store, embedder, options)
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
        in id order (each batch one embedder call and one transaction). Once none is missing,
        the store records the generation (``mark_embedded``), so a later search or turn, in any
        process, reads one row instead of counting every vector."""
        model = self.embedder.model_id
        store = self.store
        done = 0
        with self._lock:
            for _ in range(2):  # embed what is missing, then count again to record it
                generation = store.generation(USER_WORKSPACE)
                if generation == self._embedded_at or generation == store.embedded_at(model):
                    self._embedded_at = generation
                    return done
                total = store.count_missing_vectors(model)
                if total <= 0:
                    store.mark_embedded(model, generation)
                    self._embedded_at = generation
                    return done
                written = self._embed_batches(model, total, done, progress)
                done += written
                if not written:
                    break
            self._embedded_at = None
        return done

    def _embed_batches(
        self, model: str, total: int, done: int, progress: IndexProgress | None
    ) -> int:
        """Embed the units missing a vector (about ``total``), a batch a transaction."""
        written = 0
        cursor = 0
        while True:
            batch = self.store.units_missing_vectors(model, limit=EMBED_BATCH, after_id=cursor)
            if not batch:
                return written
            vectors = self.embedder.embed([unit.text for _, unit in batch])
            self.store.put_vectors(model, [i for i, _ in batch], vectors)
            written += len(batch)
            cursor = batch[-1][0]
            if progress is not None:
                progress(done + written, max(done + total, done + written))

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
        scope = self.scope(workspace_id)
        if scope != USER_WORKSPACE:
            self._ranker.warm_keywords(scope)

    def scope(self, workspace_id: str) -> str:
        """The scope a search of ``workspace_id`` ranks in: the user's when the workspace has
        no memories of its own (the same units and statistics), so a new workspace never copies
        the user's keyword index."""
        return workspace_id if self.store.has_own_units(workspace_id) else USER_WORKSPACE

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
        scope = self.scope(workspace_id)
        method = ranker.method(fusion)
        depth = max(ranker.options.candidates, k)
        ranked = ranker.rank(scope, query, k=depth, fusion=method)
        units = self.store.get_units([r[0] for r in ranked])
        scale, lexical = ranker.query_evidence(
            scope,
            query,
            ranker.keyword_terms(scope, query),
            lexical=method is not FusionMethod.VECTOR,
        )
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
