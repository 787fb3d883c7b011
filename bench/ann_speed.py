"""The vector side at scale: exact top-k (Kairox's row dots) against approximate (HNSW) indexes.

For each size (default 10k, 100k, 300k; ``--sizes 10000,100000,300000,1000000`` for the 1M row,
which takes many minutes to build), on synthetic 384-d unit vectors of low intrinsic dimension
(2,000 cluster centres, each spread over a 32-d subspace: real embeddings are like that, uniform
random vectors are no model's output), with queries near stored vectors:
  * exact: ``kairox.retrieval.vectors.row_dots`` + ``top`` over the float32 matrix (the baseline,
    interleaved query by query with each index);
  * usearch / hnswlib / faiss HNSW (M=16, ef_construction=128, a row per ``--ef`` value;
    those installed and named by ``--libs``): build seconds, the index's resident memory (RSS
    growth), p50 query ms for the top ``--depth`` candidates (the hybrid's vector side asks for
    100), and recall@10
    against exact.
The crossover is where an index's p50 drops under exact's. Run with ``nice`` on a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from kairox.retrieval import ann
from kairox.retrieval.embeddings.base import FloatMatrix, l2_normalise
from kairox.retrieval.vectors import row_dots, top

DIMS = 384
M, EF_CONSTRUCTION = ann.M, ann.EF_CONSTRUCTION  # what Kairox builds; --m, --ef-construction


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096 / 1e6


def peak_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1e3
    return 0.0


def corpus(size: int, queries: int, seed: int = 11) -> tuple[FloatMatrix, FloatMatrix]:
    """Unit vectors of low intrinsic dimension, as sentence embeddings have: each is a cluster
    centre plus a point of a 32-d subspace of its own cluster plus a little full-rank noise."""
    rng = np.random.default_rng(seed)
    clusters = 2000
    centres = l2_normalise(rng.standard_normal((clusters, DIMS)).astype(np.float32))
    basis = rng.standard_normal((16, 32, DIMS)).astype(np.float32) / np.sqrt(DIMS)
    rows = np.empty((size, DIMS), dtype=np.float32)
    step = 50_000
    for start in range(0, size, step):
        n = min(step, size - start)
        which = rng.integers(0, clusters, n)
        latent = rng.standard_normal((n, 32)).astype(np.float32)
        spread = np.empty((n, DIMS), dtype=np.float32)
        for b in range(len(basis)):  # one subspace at a time: no n x 32 x 384 temporary
            picked = which % len(basis) == b
            spread[picked] = latent[picked] @ basis[b]
        noise = 0.01 * rng.standard_normal((n, DIMS)).astype(np.float32)
        rows[start : start + n] = centres[which] + 0.5 * spread + noise
    rows = l2_normalise(rows)
    near = rows[rng.integers(0, size, queries)]
    asked = l2_normalise(near + 0.02 * rng.standard_normal(near.shape).astype(np.float32))
    return rows, asked


def _usearch(index: Any, q: FloatMatrix, k: int, ef: int) -> np.ndarray:
    index.expansion_search = ef
    return np.asarray(index.search(q, k, threads=1).keys)


def build(lib: str, rows: FloatMatrix, ids: np.ndarray) -> Callable[[FloatMatrix, int], np.ndarray]:
    if lib == "usearch":
        from usearch.index import Index

        index: Any = Index(ndim=DIMS, metric="ip", dtype="f32", connectivity=M,
                           expansion_add=EF_CONSTRUCTION)  # fmt: skip
        index.add(ids, rows, threads=2)
        return lambda q, k, ef: _usearch(index, q, k, ef)
    if lib == "usearch-f16":
        from usearch.index import Index

        index = Index(ndim=DIMS, metric="ip", dtype="f16", connectivity=M,
                      expansion_add=EF_CONSTRUCTION)  # fmt: skip
        index.add(ids, rows, threads=2)
        return lambda q, k, ef: _usearch(index, q, k, ef)
    if lib == "hnswlib":
        import hnswlib

        index = hnswlib.Index(space="ip", dim=DIMS)
        index.init_index(max_elements=len(rows), M=M, ef_construction=EF_CONSTRUCTION)
        index.add_items(rows, ids, num_threads=2)
        index.set_num_threads(1)

        def walk(q: FloatMatrix, k: int, ef: int) -> np.ndarray:
            index.set_ef(ef)
            return np.asarray(index.knn_query(q, k=k)[0][0])

        return walk
    if lib == "faiss":
        import faiss

        faiss.omp_set_num_threads(2)
        inner = faiss.IndexHNSWFlat(DIMS, M, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = EF_CONSTRUCTION
        index = faiss.IndexIDMap(inner)
        index.add_with_ids(rows, ids)

        def search(q: FloatMatrix, k: int, ef: int) -> np.ndarray:
            inner.hnsw.efSearch = ef
            faiss.omp_set_num_threads(1)
            return np.asarray(index.search(q[None, :], k)[1][0])

        return search
    raise ValueError(lib)


def measure(size: int, libs: list[str], queries: int, depth: int, efs: list[int]) -> None:
    rows, asked = corpus(size, queries)
    ids = np.arange(size, dtype=np.int64)
    exact_ms: list[float] = []
    truth = []
    for q in asked:
        started = time.perf_counter()
        hits = top(ids, row_dots(rows, q), depth)
        exact_ms.append((time.perf_counter() - started) * 1000)
        truth.append({i for i, _ in hits[:10]})
    exact = statistics.median(exact_ms)
    print(f"| {size:,} | exact (baseline) | - | - | - | {exact:.2f} | 1.000 | 1.00x |")
    for lib in libs:
        gc.collect()
        before = rss_mb()
        started = time.perf_counter()
        search = build(lib, rows, ids)
        built = time.perf_counter() - started
        grown = rss_mb() - before
        for ef in efs:
            ann_ms, exact_again, found = [], [], 0
            for q, want in zip(asked, truth, strict=True):  # interleaved with exact: same load
                started = time.perf_counter()
                keys = search(q, depth, max(ef, depth))
                ann_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                top(ids, row_dots(rows, q), depth)
                exact_again.append((time.perf_counter() - started) * 1000)
                found += len(want & set(keys[:10].tolist()))
            p50, base = statistics.median(ann_ms), statistics.median(exact_again)
            recall = found / (10 * len(asked))
            print(f"| {size:,} | {lib} | {built:.1f} | {grown:.0f} | {ef} | {p50:.2f} | "
                  f"{recall:.3f} | {base / p50:.2f}x (exact {base:.2f} ms) |")  # fmt: skip
        del search
    print(f"|  | (process peak RSS {peak_mb():.0f} MB) | | | | | | |")


def main() -> None:
    global M, EF_CONSTRUCTION
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,300000")
    parser.add_argument("--libs", default="usearch,hnswlib,faiss")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--ef", default="128,256,512", help="ef_search values, each a row")
    parser.add_argument("--m", type=int, default=M, help="HNSW links per node")
    parser.add_argument("--ef-construction", type=int, default=EF_CONSTRUCTION)
    args = parser.parse_args()
    M, EF_CONSTRUCTION = args.m, args.ef_construction
    libs = [
        lib for lib in args.libs.split(",")
        if importlib.util.find_spec(lib.split("-")[0]) is not None
    ]  # fmt: skip
    print(f"## Vector side: exact vs HNSW (top {args.depth}, {args.queries} queries, "
          f"{DIMS}-d, M={M}, ef_construction={EF_CONSTRUCTION})")  # fmt: skip
    print("| vectors | method | build s | index MB | ef_search | p50 ms | recall@10 | "
          "speed-up over exact |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, libs, args.queries, args.depth, [int(e) for e in args.ef.split(",")])


if __name__ == "__main__":
    main()
