"""History recall on LoCoMo (ACL 2024): recall@k of the evidence turns, per method, with a baseline.

Each conversation is ingested through the library API into a fresh home: one Kairox session per
LoCoMo session (all in one workspace), the session's date as the event times, the speaker's name
kept in each message ("Caroline: ..."), an image turn with its caption. Every question then runs
through ``HistoryIndex.search`` over all sessions of the conversation, the same search a turn's
recall runs. Methods: ``offline`` (the default ``hashing`` embedder), ``bm25`` (the keyword side
alone), ``hybrid`` (``--embedder``, default the bundled all-MiniLM-L6-v2) and ``baseline`` (plain
Okapi BM25 over the raw turn texts, written here with no Kairox code), so every figure is a ratio.

LoCoMo's recall@k: the fraction of a question's evidence turns in the top k, averaged (a question
without evidence counts as 1); at session level a session is hit when any of its turns is. Groups:
categories 1-4 together, category 5 (adversarial) apart. Nothing is tuned on the questions.

Speed: ingest throughput (turns/s, from the events to searchable units with vectors) and search
p50/p95 over each conversation, then over a synthetic 30k-turn history (turns sampled from the
conversations' own sentences, timed with the questions as queries; the hybrid side uses random
unit vectors stored under the model's id, since only the query is embedded at search time).
The LoCoMo data is read from ``../shared/data/locomo`` at run time (CC BY-NC 4.0): never copy
it into the repository.

Run: ``.venv/bin/python bench/recall_locomo.py [--data FILE] [--embedder SPEC] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from kairox.core.events import AssistantMessageCompleted, UserMessageAdded
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.embeddings.base import EmbeddingBackend
from kairox.retrieval.fusion import FusionMethod
from kairox.retrieval.history import HistoryIndex
from kairox.services import Services

KS = (1, 5, 10, 25)
METHODS = ("offline", "bm25", "hybrid", "baseline")
GROUPS = ("cat1-4", "cat5")
LEVELS = ("turn", "session")
DEFAULT_EMBEDDER = "sentence-transformers:all-MiniLM-L6-v2"
ISSUE_BASELINES = "plain baselines in the issue (cat1-4, R@5): turn BM25 0.482, MiniLM 0.407, "
ISSUE_BASELINES += "fusion 0.541; session BM25 0.794, fusion 0.827"


def default_data() -> Path:
    override = os.environ.get("KAIROX_LOCOMO")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


class SettableClock:
    """The event times: each LoCoMo session's date, a second apart per turn."""

    def __init__(self) -> None:
        self.moment = datetime(2023, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self.moment


# -- the data -------------------------------------------------------------------------------


@dataclass
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    caption: str | None


@dataclass
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[tuple[int, datetime, list[Turn]]]
    questions: list[Question]
    dropped_evidence: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [t for _, _, turns in self.sessions for t in turns]


_DIA = re.compile(r"^D(\d+):(\d+)$")


def parse_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: Path) -> list[Conversation]:
    out: list[Conversation] = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        sessions = []
        numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
        for n in numbers:
            turns = [
                Turn(t["dia_id"], n, t["speaker"], t["text"], t.get("blip_caption"))
                for t in conv[f"session_{n}"]
            ]
            sessions.append((n, parse_date(conv[f"session_{n}_date_time"]), turns))
        known = {t.dia_id for _, _, turns in sessions for t in turns}
        questions, dropped = [], 0
        for qa in sample["qa"]:
            evidence: list[str] = []
            for raw in qa.get("evidence", []):
                for piece in re.split(r"[;\s]+", str(raw)):
                    if _DIA.match(piece) and piece in known:
                        evidence.append(piece)
                    elif piece:
                        dropped += 1
            questions.append(Question(qa["question"], int(qa["category"]), tuple(evidence)))
        speakers = (conv["speaker_a"], conv["speaker_b"])
        out.append(Conversation(sample["sample_id"], speakers, sessions, questions, dropped))
    return out


def message(turn: Turn) -> str:
    """A LoCoMo turn as a transcript import would write it: the speaker's name, the text and,
    for a shared image, its caption."""
    text = f"{turn.speaker}: {turn.text}"
    if turn.caption:
        text += f" [shares a photo: {turn.caption}]"
    return text


# -- ingest and search through Kairox ----------------------------------------------------------


@dataclass
class Home:
    services: Services
    workspace_id: str
    seq_to_dia: dict[int, str]
    indexes: dict[str, HistoryIndex] = field(default_factory=dict)


def ingest(conv: Conversation, root: Path) -> tuple[Home, float]:
    """Append every turn as events (one session per LoCoMo session); returns the seconds."""
    clock = SettableClock()
    services = Services.open(root / "home", clock=clock)
    workspace = root / "workspace"
    workspace.mkdir()
    seq_to_dia: dict[int, str] = {}
    started = time.perf_counter()
    workspace_id = ""
    for number, date, turns in conv.sessions:
        clock.moment = date
        info = services.sessions.start(f"{conv.sample_id}-session-{number}", workspace, "local")
        workspace_id = info.workspace_id
        turn_no = 0
        for i, turn in enumerate(turns):
            clock.moment = date + timedelta(seconds=i)
            if turn.speaker == conv.speakers[0] or turn_no == 0:
                turn_no += 1
            text = message(turn)
            payload: UserMessageAdded | AssistantMessageCompleted
            if turn.speaker == conv.speakers[0]:
                payload = UserMessageAdded(turn=turn_no, text=text)
            else:
                payload = AssistantMessageCompleted(turn=turn_no, text=text, model="locomo")
            event = services.events.append(
                payload, session_id=info.id, workspace_id=info.workspace_id
            )
            seq_to_dia[event.seq] = turn.dia_id
    return Home(services, workspace_id, seq_to_dia), time.perf_counter() - started


def build_index(home: Home, name: str, embedder: EmbeddingBackend) -> float:
    """Catch the history index up and embed it; returns the seconds."""
    index = HistoryIndex(home.services.history, home.services.events, embedder)
    started = time.perf_counter()
    index.refresh(home.workspace_id)
    home.indexes[name] = index
    return time.perf_counter() - started


def kairox_search(
    home: Home, name: str, fusion: FusionMethod | None
) -> Callable[[str, int], list[str]]:
    index = home.indexes[name]

    def search(query: str, k: int) -> list[str]:
        hits = index.search(query, workspace_id=home.workspace_id, k=k, fusion=fusion)
        return [home.seq_to_dia[h.seq] for h in hits]

    return search


# -- the plain baseline: Okapi BM25 over raw turn texts, no Kairox code ---------------------------

_TOKEN = re.compile(r"\w+")


class PlainBM25:
    def __init__(self, docs: Sequence[tuple[str, str]], k1: float = 1.2, b: float = 0.75):
        self.ids = [d for d, _ in docs]
        self.tfs = [Counter(_TOKEN.findall(text.lower())) for _, text in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lens) / max(len(self.lens), 1)
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, tf in enumerate(self.tfs):
            for term in tf:
                self.postings.setdefault(term, []).append(i)
        self.k1, self.b = k1, b

    def search(self, query: str, k: int) -> list[str]:
        scores: dict[int, float] = {}
        for term in set(_TOKEN.findall(query.lower())):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i in self.postings[term]:
                tf = self.tfs[i][term]
                norm = (
                    tf
                    * (self.k1 + 1)
                    / (tf + self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg))
                )
                scores[i] = scores.get(i, 0.0) + idf * norm
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        return [self.ids[i] for i, _ in best]


class Bm25sTurns:
    """bm25s (sparse matrices, Lucene BM25) over the turns as Kairox indexes them (speaker and
    text, FTS5 porter stems): the keyword side's speed baseline, on the same questions."""

    def __init__(self, docs: Sequence[tuple[str, str]]) -> None:
        import bm25s

        from kairox.store.terms import QueryStemmer
        from kairox.store.words import words

        self._stemmer = QueryStemmer()
        corpus = [words(text) for _, text in docs]
        stems = self._stemmer.tokens({w for doc in corpus for w in doc})
        self.ids = [d for d, _ in docs]
        self.retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        self.retriever.index(
            [[t for w in d for t in stems[w]] for d in corpus], show_progress=False
        )
        self.vocab = self.retriever.vocab_dict

    def search(self, query: str, k: int) -> list[str]:
        from kairox.retrieval.search import query_terms

        terms = [s for s in self._stemmer.stems(query_terms(query)) if s in self.vocab]
        if not terms:
            return []
        found, scores = self.retriever.retrieve(
            [terms], k=min(k, len(self.ids)), show_progress=False
        )
        return [self.ids[int(i)] for i, s in zip(found[0], scores[0], strict=True) if s > 0]


def keyword_side(home: Home, name: str) -> Callable[[str, int], list[str]]:
    """Kairox's keyword ranking alone (the in-memory BM25 index of the workspace), no refresh."""
    index = home.indexes[name]

    def search(query: str, k: int) -> list[str]:
        ranked = index._ranker.keyword(home.workspace_id, query, k)
        return [home.seq_to_dia[seq] for seq, _ in ranked if seq in home.seq_to_dia]

    return search


# -- scoring --------------------------------------------------------------------------------


def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


def recall_at(retrieved: Sequence[str], evidence: Sequence[str], k: int, level: str) -> float:
    if not evidence:
        return 1.0
    top = retrieved[:k]
    if level == "session":
        wanted = {session_of(e) for e in evidence}
        return len(wanted & {session_of(r) for r in top}) / len(wanted)
    return len(set(evidence) & set(top)) / len(set(evidence))


@dataclass
class Tally:
    sums: dict[tuple[str, str, str, int], float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=dict)

    def add(self, method: str, group: str, retrieved: list[str], evidence: Sequence[str]) -> None:
        for level in LEVELS:
            for k in KS:
                key = (method, group, level, k)
                self.sums[key] = self.sums.get(key, 0.0) + recall_at(retrieved, evidence, k, level)
        self.counts[f"{method}/{group}"] = self.counts.get(f"{method}/{group}", 0) + 1

    def table(self) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
        out: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
        for method in METHODS:
            for group in GROUPS:
                n = self.counts.get(f"{method}/{group}", 0)
                if not n:
                    continue
                for level in LEVELS:
                    out.setdefault(method, {}).setdefault(group, {})[level] = {
                        f"R@{k}": round(self.sums[(method, group, level, k)] / n, 4) for k in KS
                    }
        return out


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return p50 * 1000, p95 * 1000


def make_embedder(spec: str, threads: int) -> EmbeddingBackend:
    if spec.startswith("sentence-transformers:"):
        from kairox.retrieval.embeddings.sentence_transformers import SentenceTransformersEmbedder

        return SentenceTransformersEmbedder(spec.partition(":")[2], threads=threads)
    return create_embedder(spec)


# -- the synthetic 30k-turn history ---------------------------------------------------------------


class UnitVectors:
    """Random unit vectors under a real model's id (the search cost does not depend on them)."""

    def __init__(self, model_id: str, dims: int) -> None:
        self.model_id = model_id
        self.dimensions = dims
        self._rng = np.random.default_rng(7)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        m = self._rng.standard_normal((len(texts), self.dimensions)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)


def synthetic(
    convs: list[Conversation], hybrid: EmbeddingBackend | None, turns: int, queries: int
) -> None:
    rng = random.Random(5)
    sentences = [message(t) for c in convs for t in c.turns]
    probes = [q.text for c in convs for q in c.questions]  # timing only: real recall queries
    print(f"\n## Search over a synthetic {turns:,}-turn history (one workspace, 100 sessions)")
    with tempfile.TemporaryDirectory(prefix="kairox-recall-30k-") as tmp:
        clock = SettableClock()
        services = Services.open(Path(tmp) / "home", clock=clock)
        (Path(tmp) / "ws").mkdir()
        per = turns // 100
        started = time.perf_counter()
        workspace_id = ""
        raw: list[tuple[str, str]] = []
        for s in range(100):
            info = services.sessions.start(f"synthetic-{s}", Path(tmp) / "ws", "local")
            workspace_id = info.workspace_id
            with services.db.atomic():
                for i in range(per):
                    clock.moment += timedelta(seconds=30)
                    text = " ".join(rng.sample(sentences, 2))
                    event = services.events.append(
                        UserMessageAdded(turn=i + 1, text=text),
                        session_id=info.id,
                        workspace_id=info.workspace_id,
                    )
                    raw.append((str(event.seq), text))
        append_s = time.perf_counter() - started
        offline = HistoryIndex(services.history, services.events, create_embedder("hashing"))
        started = time.perf_counter()
        offline.refresh(workspace_id)
        index_s = time.perf_counter() - started
        print(f"appended {turns:,} events in {append_s:.1f} s; indexed (units + hashing vectors) "
              f"in {index_s:.1f} s = {turns / index_s:,.0f} turns/s")  # fmt: skip
        words = [rng.sample(probes, 1)[0] for _ in range(queries)]
        plans: list[tuple[str, Callable[[str], object]]] = [
            ("offline (hashing, lexical-first)",
             lambda q: offline.search(q, workspace_id=workspace_id, k=10, refresh=False)),
        ]  # fmt: skip
        if hybrid is not None:
            stand_in = UnitVectors(hybrid.model_id, hybrid.dimensions)
            vectors = HistoryIndex(services.history, services.events, stand_in)  # type: ignore[arg-type]
            vectors.refresh(workspace_id)
            real = HistoryIndex(services.history, services.events, hybrid)
            plans.append(
                ("hybrid (MiniLM query, min-max)",
                 lambda q: real.search(q, workspace_id=workspace_id, k=10, refresh=False))
            )  # fmt: skip
        plain = PlainBM25(raw)
        plans.append(("baseline plain BM25 (pure Python)", lambda q: plain.search(q, 10)))
        home = Home(services, workspace_id, {int(seq): seq for seq, _ in raw}, {"offline": offline})
        plans.append(("keyword side (in-memory BM25, top 10)",
                      lambda q: keyword_side(home, "offline")(q, 10)))  # fmt: skip
        fast = Bm25sTurns(raw)
        plans.append(("baseline bm25s (same stems, top 10)", lambda q: fast.search(q, 10)))
        results: dict[str, float] = {}
        for label, fn in plans:
            fn(words[0])  # warm: matrices load once
            times = []
            for q in words:
                t0 = time.perf_counter()
                fn(q)
                times.append(time.perf_counter() - t0)
            p50, p95 = percentiles(times)
            results[label] = p50
            print(f"  {label:<38} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms")
        keyword = results["keyword side (in-memory BM25, top 10)"]
        base = results["baseline bm25s (same stems, top 10)"]
        verdict = "met" if keyword <= 3 * base else "MISSED"
        print(f"  keyword side / bm25s: {keyword / base:.2f}x (target <= 3x: {verdict})")
        services.close()


def end_to_end(tally: Tally) -> None:
    """The end-to-end figures (query string to ranked hits, what ``kairox recall`` and a turn's
    recall pay in a warm process: catch-up check, query words and stems, keyword ranking,
    session scores, fusion, the hits' units read or kept, failed turns left out) beside the
    same-run baselines: the whole BM25 search against bm25s (its own query words and stems
    included; it returns ids and reads no rows), and each hybrid against the BM25 search plus
    one query embedding of its embedder."""
    p50 = {method: percentiles(values)[0] for method, values in tally.latencies.items()}
    bm25, bm25s_p50, alone = p50["bm25"], p50["bm25s beside"], p50["bm25s"]
    verdict = "met" if bm25 <= 3 * bm25s_p50 else "MISSED"
    print(f"end to end: bm25 search p50 {bm25:.2f} ms beside bm25s {bm25s_p50:.2f} ms (timed "
          f"question by question with the searches): {bm25 / bm25s_p50:.1f}x (target <= 3x: "
          f"{verdict}); against bm25s in a loop of its own ({alone:.2f} ms): "
          f"{bm25 / alone:.1f}x")  # fmt: skip
    for method in ("offline", "hybrid"):
        if method not in p50 or f"embed:{method}" not in p50:
            continue
        floor = bm25 + p50[f"embed:{method}"]
        verdict = "met" if p50[method] <= 1.5 * floor else "MISSED"
        ratio = p50[method] / floor
        print(f"end to end: {method} p50 {p50[method]:.2f} ms beside bm25 + one query embedding "
              f"{floor:.2f} ms: {ratio:.2f}x (target <= 1.5x: {verdict})")  # fmt: skip


# -- main -----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=default_data(), help="a LoCoMo-format file")
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="the hybrid's embedder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON last")
    parser.add_argument("--synthetic-turns", type=int, default=30_000)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--speed-only", action="store_true", help="only the synthetic history")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"error: no LoCoMo data at {args.data}; pass --data FILE", file=sys.stderr)
        return 1
    convs = load(args.data)
    try:
        hybrid: EmbeddingBackend | None = make_embedder(args.embedder, args.threads)
        assert hybrid is not None
        hybrid.dimensions  # noqa: B018  (loads the model now, outside the timings)
    except Exception as exc:  # a missing extra or model: report and bench the rest
        print(f"warning: hybrid skipped: {exc}", file=sys.stderr)
        hybrid = None
    n_turns = sum(len(c.turns) for c in convs)
    dropped = sum(c.dropped_evidence for c in convs)
    print(f"# History recall on LoCoMo: {len(convs)} conversations, {n_turns:,} turns, "
          f"{sum(len(c.questions) for c in convs)} questions ({args.data.name}; "
          f"{dropped} malformed evidence ids dropped)")  # fmt: skip
    if args.speed_only:
        synthetic(convs, hybrid, args.synthetic_turns, queries=200)
        return 0
    tally = Tally()
    ingest_s = {"events": 0.0, "offline": 0.0, "hybrid": 0.0}
    for conv in convs:
        with tempfile.TemporaryDirectory(prefix="kairox-locomo-") as tmp:
            home, seconds = ingest(conv, Path(tmp))
            ingest_s["events"] += seconds
            ingest_s["offline"] += build_index(home, "offline", create_embedder("hashing"))
            # bm25 searches through its own index (the same units and vectors): an index keeps
            # the units it returned, and each method's timings should warm only its own.
            build_index(home, "bm25", create_embedder("hashing"))
            searches: dict[str, Callable[[str, int], list[str]]] = {
                "offline": kairox_search(home, "offline", None),
                "bm25": kairox_search(home, "bm25", FusionMethod.BM25),
            }
            if hybrid is not None:
                ingest_s["hybrid"] += build_index(home, "hybrid", hybrid)
                searches["hybrid"] = kairox_search(home, "hybrid", None)
            plain = PlainBM25([(t.dia_id, t.text) for t in conv.turns])
            searches["baseline"] = plain.search
            turns = [(t.dia_id, message(t)) for t in conv.turns]
            bm25s = Bm25sTurns(turns).search
            timed_only = {"keyword": keyword_side(home, "offline"), "bm25s": bm25s}
            embedders = {"offline": create_embedder("hashing")}
            if hybrid is not None:
                embedders["hybrid"] = hybrid
            for question in conv.questions:  # one query embedding: what a hybrid adds to bm25
                for method, embedder in embedders.items():
                    t0 = time.perf_counter()
                    embedder.embed([question.text])
                    tally.latencies.setdefault(f"embed:{method}", []).append(
                        time.perf_counter() - t0
                    )
                for method, search in timed_only.items():
                    t0 = time.perf_counter()
                    search(question.text, max(KS))
                    tally.latencies.setdefault(method, []).append(time.perf_counter() - t0)
            for question in conv.questions:
                group = "cat5" if question.category == 5 else "cat1-4"
                # bm25s beside each question's searches: the same moments of load
                t0 = time.perf_counter()
                bm25s(question.text, max(KS))
                tally.latencies.setdefault("bm25s beside", []).append(time.perf_counter() - t0)
                for method, search in searches.items():
                    t0 = time.perf_counter()
                    retrieved = search(question.text, max(KS))
                    tally.latencies.setdefault(method, []).append(time.perf_counter() - t0)
                    tally.add(method, group, retrieved, question.evidence)
            for index in home.indexes.values():
                index.close()
            home.services.close()
    table = tally.table()
    print(f"\n{ISSUE_BASELINES}")
    for group in GROUPS:
        for level in LEVELS:
            print(f"\n## {group}, {level} level (n={tally.counts.get(f'baseline/{group}', 0)})")
            print(f"{'method':<10}" + "".join(f"{'R@' + str(k):>8}" for k in KS))
            for method in METHODS:
                if method in table:
                    row = table[method][group][level]
                    print(f"{method:<10}" + "".join(f"{row[f'R@{k}']:>8.3f}" for k in KS))
    print("\n## Ingest and search (LoCoMo conversations)")
    events_rate = n_turns / ingest_s["events"]
    print(f"events appended: {events_rate:,.0f} turns/s")
    print(f"offline index (units + hashing vectors): {n_turns / ingest_s['offline']:,.0f} turns/s")
    if hybrid is not None:
        print(
            f"hybrid index ({hybrid.model_id} vectors): {n_turns / ingest_s['hybrid']:,.0f} turns/s"
        )
    for method, values in tally.latencies.items():
        p50, p95 = percentiles(values)
        print(f"search {method:<9} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms")
    keyword = percentiles(tally.latencies["keyword"])[0]
    bm25s_p50 = percentiles(tally.latencies["bm25s"])[0]
    verdict = "met" if keyword <= 3 * bm25s_p50 else "MISSED"
    print(f"keyword side / bm25s over one conversation: {keyword / bm25s_p50:.2f}x "
          f"(target <= 3x: {verdict}); 'keyword' is Kairox's keyword ranking alone, 'bm25' the "
          "whole recall search with BM25 fusion (refresh, scores, session names)")  # fmt: skip
    end_to_end(tally)
    if args.synthetic_turns > 0:
        synthetic(convs, hybrid, args.synthetic_turns, queries=200)
    if args.json:
        print(json.dumps(table, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
