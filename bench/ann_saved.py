"""A fresh process's first hybrid search at scale on SQLite: the saved HNSW index against the exact
scan and against building the index, same corpus, same run.

On ``bench/hybrid_scale.py``'s SQLite corpus (``--cache`` folder, ``scale-N.db``: made there
first when missing), the parent saves the keyword index and the HNSW index (what ``kairox index``
leaves: ``HybridSearcher.warm_keywords`` / ``warm_vectors``; build + save seconds and the index's
size on disk printed), then starts one fresh process per mode, each timing from opening the
database to its first hybrid (min-max) search's hits, then the p50 of the next hybrid and
vector-only searches, their top-10 recall against the exact child's, and its peak RSS:
  * exact: no index (``ann_min_rows`` out of reach): the scope's matrix is read from the store and
    scanned, the baseline;
  * saved: the saved index is loaded (and checked against a sample of the store's rows); the
    matrix is never read; a row per ``--ef`` (ef_search) value;
  * build: no saved index to load: the index is built from the matrix before the first search
    (what using the index would cost without saving it; ``--no-build`` leaves it out at 1M).
Run one size at a time on a shared machine: a 1M child holds about 3 GB.
Run: ``nice .venv/bin/python bench/ann_saved.py --cache /tmp/kairox-1m --sizes 100000,1000000``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from ann_speed import corpus, peak_mb
from hybrid_scale import MODEL, QueryVectors, fill
from kairox.retrieval import ann
from kairox.retrieval.embeddings.base import l2_normalise
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.search import HybridSearcher
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from retrieval_speed import Vocabulary

WS = "ws_scale"
MODES = {"exact": 1 << 62, "saved": 0, "build": 0}


class Unsaved(SqliteChunkStore):
    """A store that keeps no saved vector index: a process must build it."""

    def vector_index_files(self, scope: str, model: str) -> None:
        return None


def sqlite_corpus(folder: Path, size: int) -> None:
    """The size's SQLite corpus in ``folder`` (``scale-N.db``, as ``bench/hybrid_scale.py
    --cache`` keeps it): filled now unless a finished one is there."""
    folder.mkdir(parents=True, exist_ok=True)
    path, done = folder / f"scale-{size}.db", folder / f"scale-{size}.done"
    if done.exists():
        return
    rows, _ = corpus(size, 1)
    path.unlink(missing_ok=True)
    db = Database.open(path)
    started = time.perf_counter()
    fill(SqliteChunkStore(db), rows, Vocabulary())
    db.close()
    done.write_text(f"{time.perf_counter() - started:.0f}\n")


def queries_for(db: Database, count: int) -> tuple[list[str], np.ndarray]:
    """Query texts of 3-8 words and vectors near stored ones (read back from the store)."""
    store = SqliteChunkStore(db)
    rng = np.random.default_rng(5)
    vocab = Vocabulary()
    total = store.chunk_count(WS)
    ids = sorted(set(rng.integers(1, total, count * 2).tolist()))[:count]
    loaded = store.load_vectors_of(WS, MODEL, ids)
    assert loaded is not None
    near = loaded[1]
    vectors = l2_normalise(near + 0.02 * rng.standard_normal(near.shape).astype(np.float32))
    texts = [
        " ".join(vocab.words[i] for i in rng.choice(len(vocab.words), n, p=vocab.p)) + f" q{j}"
        for j, n in enumerate(rng.integers(3, 9, size=len(vectors)))
    ]
    return texts, vectors


def child(path: Path, mode: str, asked: Path, ef: int) -> None:
    ann.EF_SEARCH = ef
    data = np.load(asked)
    texts = json.loads(str(data["texts"]))
    embedder = QueryVectors(dict(zip(texts, data["vectors"], strict=True)))
    started = time.perf_counter()
    db = Database.open(path)
    store = (Unsaved if mode == "build" else SqliteChunkStore)(db)
    searcher = HybridSearcher(store, embedder, SearchOptions(ann_min_rows=MODES[mode]))
    if mode == "build":
        searcher.build_vector_index(WS)
    hits = searcher.search(WS, texts[0], k=10, fusion=FusionMethod.MINMAX)
    first = (time.perf_counter() - started) * 1000
    used = searcher.vector_side(WS)[1] is not None
    out: dict[str, object] = {"first": first, "hnsw": used, "peak": peak_mb()}
    for name, fusion in (("hybrid", FusionMethod.MINMAX), ("vector", FusionMethod.VECTOR)):
        times, tops = [], []
        for text in texts:
            begun = time.perf_counter()
            found = searcher.search(WS, text, k=10, fusion=fusion)
            times.append((time.perf_counter() - begun) * 1000)
            tops.append([h.chunk_id for h in found])
        out[name] = statistics.median(times[1:])
        out[f"{name}_top"] = tops
    out["hits"] = len(hits)
    print(json.dumps(out))
    db.close()


def run(path: Path, mode: str, asked: Path, ef: int = ann.EF_SEARCH) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            mode,
            "--db",
            str(path),
            "--asked",
            str(asked),
            "--ef",
            str(ef),
        ],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def recall(got: dict[str, Any], want: dict[str, Any], name: str) -> float:
    pairs = zip(got[f"{name}_top"], want[f"{name}_top"], strict=True)
    return sum(len(set(g) & set(w)) for g, w in pairs) / sum(len(w) for w in want[f"{name}_top"])


def measure(folder: Path, size: int, count: int, reuse: bool, efs: list[int], build: bool) -> None:
    path = folder / f"scale-{size}.db"
    sqlite_corpus(folder, size)
    db = Database.open(path)
    texts, vectors = queries_for(db, count)
    asked = folder / f"asked-{size}.npz"
    np.savez(asked, texts=json.dumps(texts), vectors=vectors)
    warm = HybridSearcher(SqliteChunkStore(db), QueryVectors({}), SearchOptions(ann_min_rows=0))
    warm.warm_keywords(WS)
    saved = SqliteChunkStore(db).vector_index_files(WS, MODEL)
    assert saved is not None
    if not reuse:
        for old in saved.folder.glob(f"{saved.stem}.*"):
            old.unlink()  # the index is saved anew: its build is timed
    started = time.perf_counter()
    warm.warm_vectors(WS)
    built = time.perf_counter() - started
    building_peak = peak_mb()  # the parent holds the matrix and the graph while building
    on_disk = sum(f.stat().st_size for f in saved.folder.glob(f"{saved.stem}.*")) / 1e6
    warm.invalidate()
    db.close()
    del warm
    print(f"{size:,}: index built and saved in {built:.0f} s, parent peak RSS "
          f"{building_peak:.0f} MB", file=sys.stderr, flush=True)  # fmt: skip
    got: dict[str, dict[str, Any]] = {}
    for ef in efs:
        got[f"saved, ef {ef}"] = run(path, "saved", asked, ef)
        print(f"{size:,}: saved child, ef {ef} done", file=sys.stderr, flush=True)
    base = run(path, "exact", asked)
    if build:
        got["build"] = run(path, "build", asked)
    for mode, r in got.items():
        print(f"| {size:,} | {mode} | {r['first']:.0f} | {base['first'] / r['first']:.2f}x | "
              f"{r['hybrid']:.1f} | {base['hybrid'] / r['hybrid']:.1f}x | "
              f"{recall(r, base, 'hybrid'):.3f} | {r['vector']:.1f} | "
              f"{base['vector'] / r['vector']:.1f}x | {recall(r, base, 'vector'):.3f} | "
              f"{r['peak']:.0f} | {'yes' if r['hnsw'] else 'no'} |")  # fmt: skip
    print(f"| {size:,} | exact (baseline) | {base['first']:.0f} | 1.00x | "
          f"{base['hybrid']:.1f} | 1.0x | 1.000 | {base['vector']:.1f} | 1.0x | 1.000 | "
          f"{base['peak']:.0f} | no |")  # fmt: skip
    what = "loaded (--reuse)" if reuse else "build + save"
    print(f"| {size:,} | (the saved index: {what} {built:.0f} s, {on_disk:.0f} MB on disk, "
          f"M={ann.M}, ef_construction={ann.EF_CONSTRUCTION}; parent peak RSS "
          f"{building_peak:.0f} MB) "
          "| | | | | | | | | |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/kairox-bench-scale"))
    parser.add_argument("--reuse", action="store_true", help="keep a saved index found there")
    parser.add_argument("--ef", default=str(ann.EF_SEARCH), help="ef_search values (saved rows)")
    parser.add_argument("--no-build", action="store_true", help="no child that builds (1M)")
    parser.add_argument("--child", choices=sorted(MODES))
    parser.add_argument("--db", type=Path)
    parser.add_argument("--asked", type=Path)
    args = parser.parse_args()
    if args.child:
        child(args.db, args.child, args.asked, int(args.ef))
        return
    print(f"## A fresh process's first hybrid search, SQLite: saved HNSW vs exact vs building "
          f"({args.queries} queries; ratios against the same run's exact baseline)")  # fmt: skip
    print("| chunks | mode | open to first hits ms | exact / mode | hybrid p50 ms | exact / mode | "
          "hybrid recall@10 vs exact | vector p50 ms | exact / mode | vector recall@10 | "
          "child peak RSS MB | walks HNSW |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        efs = [int(e) for e in args.ef.split(",")]
        measure(args.cache, size, args.queries, args.reuse, efs, not args.no_build)


if __name__ == "__main__":
    main()
