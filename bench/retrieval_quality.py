"""Retrieval quality on BEIR SciFact (or another BEIR-layout set): nDCG@10 and Recall@100 for
each search mode.

The 5,183 abstracts are written as files into a workspace and indexed with ``index_workspace``,
the same code path ``kairox index`` uses; MiniLM vectors are added with ``reembed``. Chunk hits
are folded into document hits (a document ranks at its best chunk). Published references are
printed beside our figures. Run: ``.venv/bin/python bench/retrieval_quality.py``.

``KAIROX_SCIFACT_DIR`` (or ``--data``) points at another set in the same layout, such as the
Chinese CMRC 2018 dev set (``../shared/data/cmrc2018-dev``). When ``bm25s`` is installed, the same
run also ranks the corpus with ``bm25s`` over CJK character bigrams (Lucene ``CJKAnalyzer`` style,
tokenised here without Kairox code), as a quality and keyword-speed baseline.

Encoding the corpus with MiniLM takes several minutes on 2 cores, so the workspace and database
are kept in ``~/.cache/kairox-bench/scifact`` (``--workdir`` to move it, ``--fresh`` to start
over): re-runs re-index incrementally (nothing changed) and only evaluate.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import shutil
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kairox.retrieval.bm25 import KeywordIndex
from kairox.retrieval.chunking import ChunkingOptions
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.embeddings.base import EmbeddingBackend
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.indexer import index_workspace, reembed
from kairox.retrieval.search import HybridSearcher
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database

DEPTH = 100
REFERENCES = {
    "bm25": "Anserini BM25 flat 0.679 / BEIR BM25 0.665",
    "minilm": "all-MiniLM-L6-v2 (MTEB) 0.645",
}
# BM25 nDCG@10 targets per data set (by folder name); CMRC's is issue 32's.
TARGETS = {"beir-scifact": 0.66, "cmrc2018-dev": 0.95}
_CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_BASELINE_TOKENS = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")


def default_workdir(directory: Path) -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    name = "scifact" if directory.name == "beir-scifact" else directory.name
    return Path(cache) / "kairox-bench" / name


def data_dir() -> Path:
    override = os.environ.get("KAIROX_SCIFACT_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "shared" / "data" / "beir-scifact"


@dataclass(frozen=True)
class Dataset:
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load(directory: Path) -> Dataset:
    corpus: dict[str, tuple[str, str]] = {}
    with open(directory / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            corpus[str(doc["_id"])] = (doc.get("title", ""), doc["text"])
    qrels: dict[str, dict[str, int]] = {}
    with open(directory / "qrels" / "test.tsv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"].strip(), {})[row["corpus-id"].strip()] = int(
                row["score"].strip()
            )
    queries: dict[str, str] = {}
    with open(directory / "queries.jsonl", encoding="utf-8") as handle:
        for line in handle:
            query = json.loads(line)
            if str(query["_id"]) in qrels:
                queries[str(query["_id"])] = query["text"]
    return Dataset(corpus, queries, qrels)


def ndcg_at(ranking: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(
        (2 ** relevant.get(doc, 0) - 1) / math.log2(i + 2) for i, doc in enumerate(ranking[:k])
    )
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum((2**rel - 1) / math.log2(i + 2) for i, rel in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranking: list[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {doc for doc, rel in relevant.items() if rel > 0}
    return len(wanted.intersection(ranking[:k])) / len(wanted) if wanted else 0.0


def write_workspace(root: Path, corpus: dict[str, tuple[str, str]]) -> None:
    docs = root / "corpus"
    docs.mkdir(parents=True, exist_ok=True)
    for doc_id, (title, text) in corpus.items():
        target = docs / f"{doc_id}.txt"
        body = f"{title}\n\n{textwrap.fill(text, width=100)}\n"
        if not target.exists() or target.read_text(encoding="utf-8") != body:
            target.write_text(body, encoding="utf-8")


Runner = Callable[[str], list[str]]


def doc_runner(searcher: HybridSearcher, workspace_id: str, fusion: FusionMethod) -> Runner:
    def run(query: str) -> list[str]:
        hits = searcher.search(workspace_id, query, k=2 * DEPTH, fusion=fusion)
        ranking = list(dict.fromkeys(Path(h.path).stem for h in hits))
        return ranking[:DEPTH]

    return run


class DroppedBefore(HybridSearcher):
    """The rule before issue 34, the same-run baseline: words in more than 5% of the chunks left
    the keyword side entirely, and when every word was that common only the rarest stayed."""

    def _split_common(self, index: KeywordIndex, stems: list[str]) -> tuple[list[str], list[str]]:
        fraction = self.common_fraction(len(index))
        if fraction is None or not stems:
            return stems, []
        df = index.document_frequencies(stems)
        kept = [s for s in stems if df.get(s, 0) <= fraction * len(index)]
        return kept or [min(stems, key=lambda s: df.get(s, 0))], []


def evaluate(data: Dataset, run: Runner) -> tuple[float, float, float]:
    started = time.perf_counter()
    ndcg = recall = 0.0
    for qid, text in data.queries.items():
        ranking = run(text)
        ndcg += ndcg_at(ranking, data.qrels[qid])
        recall += recall_at(ranking, data.qrels[qid])
    n = len(data.queries)
    return ndcg / n, recall / n, (time.perf_counter() - started) / n * 1000


def bigram_tokens(text: str) -> list[str]:
    """The baseline's tokens: CJK runs as overlapping bigrams (a lone character kept), other
    runs of letters and digits lower-cased."""
    out: list[str] = []
    for run in _BASELINE_TOKENS.findall(text):
        if re.match(f"[{_CJK}]", run):
            out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        else:
            out.append(run.lower())
    return out


def bm25s_runner(data: Dataset) -> Runner | None:
    """``bm25s`` (defaults) over title + text as ``bigram_tokens``; None without bm25s."""
    try:
        import bm25s
    except ImportError:
        return None
    import numpy as np

    ids = list(data.corpus)
    retriever = bm25s.BM25()
    retriever.index(
        [bigram_tokens(f"{t}\n{x}") for t, x in data.corpus.values()], show_progress=False
    )
    known = set(retriever.vocab_dict)

    def run(query: str) -> list[str]:
        tokens = [w for w in bigram_tokens(query) if w in known]
        if not tokens:
            return []
        scores = retriever.get_scores(tokens)
        depth = min(DEPTH, len(ids))
        best = np.argpartition(-scores, depth - 1)[:depth]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [ids[int(i)] for i in best if scores[i] > 0]

    return run


def keyword_runner(searcher: HybridSearcher, workspace_id: str) -> Runner:
    """Kairox's keyword ranking alone (the in-memory BM25), as the speed comparison's side."""

    def run(query: str) -> list[str]:
        return [str(cid) for cid, _ in searcher.keyword(workspace_id, query, 10)]

    return run


def timed(data: Dataset, run: Runner) -> float:
    """Milliseconds per query of ``run`` over the queries (rankings not scored)."""
    started = time.perf_counter()
    for text in data.queries.values():
        run(text)
    return (time.perf_counter() - started) / len(data.queries) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=data_dir(), help="a BEIR-layout folder")
    parser.add_argument("--workdir", type=Path, default=None, help="(default: per data set)")
    parser.add_argument("--fresh", action="store_true", help="delete the workdir first")
    parser.add_argument("--model", default="sentence-transformers:all-MiniLM-L6-v2")
    parser.add_argument("--no-semantic", action="store_true", help="skip the MiniLM rows")
    parser.add_argument("--max-chars", type=int, default=ChunkingOptions().max_chars)
    args = parser.parse_args()
    directory: Path = args.data
    if not (directory / "corpus.jsonl").exists():
        print(f"no data set at {directory}; set KAIROX_SCIFACT_DIR", file=sys.stderr)
        return 2
    data = load(directory)
    print(f"{directory.name}: {len(data.corpus)} docs, {len(data.queries)} test queries")
    work: Path = args.workdir or default_workdir(directory)
    if args.fresh and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    root = work / "workspace"
    write_workspace(root, data.corpus)
    db = Database.open(work / "kairox.db")
    hashing = create_embedder("hashing")
    report = index_workspace(
        SqliteChunkStore(db),
        root,
        embedder=hashing,
        chunking=ChunkingOptions(max_chars=args.max_chars),
    )
    print(
        f"indexed {report.files_indexed} files ({report.files_unchanged} unchanged), "
        f"{report.chunks_total} chunks, hashing, in {report.seconds:.1f} s"
    )
    store = SqliteChunkStore(db)
    options = SearchOptions(candidates=2 * DEPTH)
    lexical = HybridSearcher(store, hashing, options)
    ws = report.workspace_id
    rows: list[tuple[str, Runner, str]] = [
        ("BM25 (porter)", doc_runner(lexical, ws, FusionMethod.BM25), "bm25"),
        ("hashing (384-d)", doc_runner(lexical, ws, FusionMethod.VECTOR), ""),
        ("hybrid BM25+hashing, lexical-first [auto]",
         doc_runner(lexical, ws, FusionMethod.LEXICAL_FIRST), ""),
        ("hybrid BM25+hashing, min-max", doc_runner(lexical, ws, FusionMethod.MINMAX), ""),
        ("hybrid BM25+hashing, RRF k=60", doc_runner(lexical, ws, FusionMethod.RRF), ""),
    ]  # fmt: skip
    forced = SearchOptions(candidates=2 * DEPTH, drop_min_chunks=0)
    dropping = HybridSearcher(store, hashing, forced)
    before = DroppedBefore(store, hashing, forced)
    rows += [
        ("BM25, terms in >5% of chunks only rescore [now, forced on]",
         doc_runner(dropping, ws, FusionMethod.BM25), ""),
        ("BM25, terms in >5% of chunks dropped [before, forced on]",
         doc_runner(before, ws, FusionMethod.BM25), ""),
    ]  # fmt: skip
    baseline = bm25s_runner(data)
    if baseline is not None:
        rows.append(("bm25s, CJK bigrams (baseline, no Kairox code)", baseline, ""))
    if not args.no_semantic:
        semantic: EmbeddingBackend = create_embedder(args.model)
        done = reembed(SqliteChunkStore(db), ws, semantic)
        print(f"embedded {done.chunks_embedded} chunks with {done.model} in {done.seconds:.1f} s")
        dense = HybridSearcher(store, semantic, options)
        rows += [
            ("MiniLM (all-MiniLM-L6-v2)", doc_runner(dense, ws, FusionMethod.VECTOR), "minilm"),
            ("hybrid BM25+MiniLM, min-max 0.5 [auto]",
             doc_runner(dense, ws, FusionMethod.MINMAX), ""),
            ("hybrid BM25+MiniLM, calibrated 0.5",
             doc_runner(dense, ws, FusionMethod.CALIBRATED), ""),
            ("hybrid BM25+MiniLM, RRF k=60", doc_runner(dense, ws, FusionMethod.RRF), ""),
        ]  # fmt: skip
        dropping_options = SearchOptions(candidates=2 * DEPTH, drop_min_chunks=0)
        dense_dropping = HybridSearcher(store, semantic, dropping_options)
        rows.append(("hybrid BM25+MiniLM min-max, terms in >5% of chunks dropped",
                     doc_runner(dense_dropping, ws, FusionMethod.MINMAX), ""))  # fmt: skip
    print()
    print("| method | nDCG@10 | Recall@100 | ms/query | published reference |")
    print("|---|---:|---:|---:|---|")
    results: dict[str, float] = {}
    for label, run, ref in rows:
        ndcg, recall, ms = evaluate(data, run)
        results[label] = ndcg
        print(f"| {label} | {ndcg:.3f} | {recall:.3f} | {ms:.1f} | {REFERENCES.get(ref, '')} |")
    bm25 = results["BM25 (porter)"]
    print()
    target = TARGETS.get(directory.name)
    if target is not None:
        print(f"target BM25 >= {target}: {'met' if bm25 >= target else 'MISSED'} ({bm25:.3f})")
    if baseline is not None:
        reference = results["bm25s, CJK bigrams (baseline, no Kairox code)"]
        keyword_ms = timed(data, keyword_runner(lexical, ws))
        baseline_ms = timed(data, baseline)
        ratio = keyword_ms / baseline_ms
        print(f"BM25 {bm25:.3f} beside bm25s with CJK bigrams {reference:.3f} (same run)")
        print(f"keyword search {keyword_ms:.2f} ms/query vs bm25s bigrams {baseline_ms:.2f}: "
              f"{ratio:.2f}x (target <= 3x: {'met' if ratio <= 3 else 'MISSED'})")  # fmt: skip
    db.close()
    hybrid = results.get("hybrid BM25+MiniLM, min-max 0.5 [auto]")
    if hybrid is not None:
        print(f"target hybrid >= 0.70: {'met' if hybrid >= 0.70 else 'MISSED'} ({hybrid:.3f}); "
              f"ratio hybrid/BM25 = {hybrid / bm25:.3f}")  # fmt: skip
    now = results["BM25, terms in >5% of chunks only rescore [now, forced on]"]
    then = results["BM25, terms in >5% of chunks dropped [before, forced on]"]
    print(f"common words (forced on at {len(data.corpus)} docs; the default starts at 20k chunks): "
          f"now {now:.3f} vs before {then:.3f}, every word {bm25:.3f} "
          f"(unchanged or better: {'yes' if now >= then - 1e-9 else 'NO'})")  # fmt: skip
    auto_hash = results["hybrid BM25+hashing, lexical-first [auto]"]
    print(f"hashing hybrid vs BM25 alone: {auto_hash:.3f} vs {bm25:.3f} (never worse: "
          f"{'yes' if auto_hash >= bm25 - 1e-9 else 'NO'})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
