"""A search in a fresh process at 100k chunks: how long until the keyword side ranks.

Before issue 34 every fresh process (``kairox search``, ``kairox send``) rebuilt the workspace's
in-memory keyword index from the chunk texts (5.2-7.6 s at 44k chunks on a quiet machine). The
index is now saved in the store (``kairox.store.keyword_snapshots``) and loaded. Each figure is a
fresh Python process (median of ``--runs``), in the same run:

* ``load``: the saved index loaded, then the first keyword ranking (target <= 0.5 s);
* ``rebuild`` (the baseline, the behaviour before): the same process with the saved index
  ignored, built from the texts;
* ``hybrid``: the first whole hybrid search (also loads the vector matrix, which the saved
  keyword index does not cover).

Synthetic ~1 KB chunks of Zipf-distributed pseudo-words (``bench/retrieval_speed.py``'s corpus).

    .venv/bin/python bench/fresh_search.py [--chunks 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

CHILD = """
import json, sys, time
started = time.perf_counter()
from pathlib import Path
from kairox.retrieval import search
from kairox.retrieval.fusion import FusionMethod
from kairox.retrieval.search import HybridSearcher
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from retrieval_speed import RandomEmbedder

path, ws, mode, query = sys.argv[1:5]
store = SqliteChunkStore(Database.open(Path(path)))
if mode == "rebuild":  # the behaviour before: nothing saved to load, nothing saved after
    store.load_keyword_snapshot = lambda scope: None
    search.SAVE_CHANGES = 1 << 60
searcher = HybridSearcher(store, RandomEmbedder("bench:384"))
imported = time.perf_counter()
if mode == "hybrid":
    searcher.search(ws, query, k=10, fusion=FusionMethod.MINMAX)
else:
    searcher.keyword(ws, query, 10)
done = time.perf_counter()
print(json.dumps({"ranked": done - imported, "process": done - started}))
"""


def child(db: Path, ws: str, mode: str, query: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), ws, mode, query],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    from kairox.retrieval.search import HybridSearcher
    from kairox.store.chunks_sqlite import SqliteChunkStore
    from kairox.store.db import Database
    from retrieval_speed import RandomEmbedder, Vocabulary, build_corpus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    vocab = Vocabulary()
    query = f"{vocab.words[3]} {vocab.words[400]} {vocab.words[9000]}"
    with tempfile.TemporaryDirectory(prefix="kairox-fresh-") as tmp:
        db_path = Path(tmp) / "kairox.db"
        db = Database.open(db_path)
        started = time.perf_counter()
        ws = build_corpus(db, Path(tmp) / "corpus", vocab, args.chunks)
        built = time.perf_counter() - started
        searcher = HybridSearcher(SqliteChunkStore(db), RandomEmbedder("bench:384"))
        started = time.perf_counter()
        searcher.warm_keywords(ws)  # what `kairox index` does once files changed
        saved = time.perf_counter() - started
        db.close()
        print(f"# Fresh-process search at {args.chunks:,} chunks (corpus written in {built:.0f} s; "
              f"keyword index built and saved once in {saved:.1f} s)")  # fmt: skip
        results: dict[str, list[dict[str, float]]] = {"load": [], "rebuild": [], "hybrid": []}
        for _ in range(args.runs):  # interleaved: the same moments of load
            for mode in results:
                results[mode].append(child(db_path, ws, mode, query))
    print("| path | first ranking s (p50) | whole process s (p50) |")
    print("|---|---:|---:|")
    p50 = {}
    for mode, runs in results.items():
        p50[mode] = statistics.median(r["ranked"] for r in runs)
        process = statistics.median(r["process"] for r in runs)
        print(f"| {mode} | {p50[mode]:.2f} | {process:.2f} |")
    verdict = "met" if p50["load"] <= 0.5 else "MISSED"
    print(f"saved keyword index: {p50['load']:.2f} s to rank vs rebuilt {p50['rebuild']:.2f} s "
          f"({p50['rebuild'] / p50['load']:.1f}x faster; target <= 0.5 s: {verdict})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
