"""Benchmark compaction: tokens before/after and time per compaction, at 1k and 10k events.

Run: ``.venv/bin/python bench/compaction.py [--small 1000] [--large 10000]``.

Two scenarios, each at both sizes, with the scripted model (so the time is Kairox's own work:
choosing the layer, the dry-run assemblies, verification and the appends):
- live: a session driven turn by turn through the facade, compacting automatically; every
  compaction is timed (CPU and wall) and the ones during the last 1k events are compared;
- cold: a session of synthetic events that was never compacted; five manual compactions. The
  first one cannot fit a summary behind a backlog larger than the window, so it falls back and
  drops the backlog (its cost grows with the backlog, once); the ones after it are bounded.
The baseline is the same measurement on the small session: time(large) / time(small) should be
about 1, because a compaction reads the layer and a budget's worth of history, never the session.
Targets are judged on CPU time, which other jobs on a shared machine inflate less than wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from kairox.app import AppFacade, CompactionResult, TurnDone
from kairox.compaction import pipeline
from kairox.compaction.policy import project
from kairox.compaction.verify import candidate, verify
from kairox.core.events import (
    AssistantMessageCompleted,
    ModelTokenDelta,
    UserMessageAdded,
)
from kairox.runtime import compactor

TARGET_RATIO = 2.0
USER = "Please continue with the next step of the migration and report what changed in {n}."
REPLY = (
    "Done with step {n}. I updated the schema in db/migrations/{n:04d}.sql, moved the old rows, "
    "rebuilt the indexes and ran the checks; everything is green."
)


@dataclass
class Timing:
    events_at_start: int
    cpu_ms: float
    wall_ms: float
    tokens_before: int
    tokens_after: int
    outcome: str


@dataclass
class Recorder:
    """Wraps ``run_compaction`` to time every compaction the engine runs."""

    facade: AppFacade | None = None
    timings: list[Timing] = field(default_factory=list)

    def install(self) -> None:
        real = compactor.run_compaction

        async def timed(*args: object, **kwargs: object) -> CompactionResult:
            assert self.facade is not None
            start_events = self.facade.services.events.last_seq()
            gc.collect()  # a collection owed to earlier work is not this compaction's cost
            cpu, wall = time.process_time(), time.perf_counter()
            result = await real(*args, **kwargs)  # type: ignore[arg-type]
            self.timings.append(
                Timing(
                    start_events,
                    (time.process_time() - cpu) * 1000,
                    (time.perf_counter() - wall) * 1000,
                    result.tokens_before,
                    result.tokens_after,
                    result.outcome,
                )
            )
            return result

        compactor.run_compaction = timed  # type: ignore[assignment]


def workspace(root: Path, turns: int, summaries: int) -> Path:
    ws = root / "ws"
    (ws / ".kairox").mkdir(parents=True)
    script = root / "script.jsonl"
    lines = [{"text": REPLY.format(n=n), "chunk": 48} for n in range(turns)]
    lines += [
        {"purpose": "summary", "text": f"Migration steps up to {n} are done; all checks green."}
        for n in range(summaries)
    ]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (ws / ".kairox" / "config.toml").write_text(
        'default_profile = "small"\n'
        f'[profiles.small]\nmodel = "scripted:{script}"\ncontext_window = 4096\n'
        "headroom = 512\n[compaction]\nretry_backoff_s = 0.0\n"
        "[retrieval]\nworkspace_index = false\n"
    )
    return ws


async def live(events: int, recorder: Recorder) -> tuple[list[Timing], float]:
    """Drive a session through the facade until the log holds ``events`` events."""
    root = Path(tempfile.mkdtemp(prefix="kairox-bench-compaction-"))
    turns = events // 6 + 10
    ws = workspace(root, turns, turns // 4)
    facade = AppFacade.open(root / "home")
    recorder.facade, recorder.timings = facade, []
    try:
        await facade.chat.open("live", workspace=ws)
        n = 0
        while facade.services.events.last_seq() < events:
            async for update in facade.chat.send("live", USER.format(n=n)):
                if isinstance(update, TurnDone) and update.outcome.failure:
                    raise SystemExit(f"turn {n} failed: {update.outcome.failure}")
            n += 1
        work = reads(facade, "live")
    finally:
        await facade.aclose()
        facade.close()
    return recorder.timings, work


def reads(facade: AppFacade, name: str, repeat: int = 30) -> float:
    """Median CPU ms of one compaction's reads (policy, layer choice, verification), repeated on
    the final session state; these are read-only, so every repetition does the same work."""
    setup = facade.chat._engine.resolver.resolve(facade.services.sessions.get(name))
    target = setup.compaction_target(facade.services)
    model = setup.summary_model()
    samples: list[float] = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        project(target)
        layer = pipeline._choose_layer(target, model)
        assert layer is not None
        verify(target, candidate(target, layer, "Migration steps are done; checks are green."))
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


async def cold(events: int, recorder: Recorder) -> list[Timing]:
    """A never-compacted session of synthetic events, then five manual compactions."""
    root = Path(tempfile.mkdtemp(prefix="kairox-bench-compaction-"))
    ws = workspace(root, 1, 5)
    facade = AppFacade.open(root / "home")
    recorder.facade = facade
    try:
        info = await facade.chat.open("cold", workspace=ws)
        store = facade.services.events
        tokenizer = facade.tokenizers.for_model(f"scripted:{root / 'script.jsonl'}")
        n = 0
        with facade.services.db.atomic():
            while store.last_seq() < events:
                n += 1
                for payload in (
                    UserMessageAdded(turn=n, text=USER.format(n=n)),
                    ModelTokenDelta(turn=n, text=REPLY.format(n=n)[:40]),
                    ModelTokenDelta(turn=n, text=REPLY.format(n=n)[40:]),
                    AssistantMessageCompleted(turn=n, text=REPLY.format(n=n), model="scripted"),
                ):
                    store.append(
                        payload,
                        session_id=info.id,
                        workspace_id=info.workspace_id,
                        counter=tokenizer,
                    )
        recorder.timings = []
        for _ in range(5):
            await facade.chat.compact("cold")
    finally:
        await facade.aclose()
        facade.close()
    return recorder.timings


def report(label: str, timings: list[Timing]) -> float:
    cpu = statistics.median(t.cpu_ms for t in timings)
    wall = statistics.median(t.wall_ms for t in timings)
    before = statistics.median(t.tokens_before for t in timings)
    after = statistics.median(t.tokens_after for t in timings)
    outcomes = sorted({t.outcome for t in timings})
    print(
        f"  {label:<34} n={len(timings):>3}  cpu {cpu:7.1f} ms  wall {wall:7.1f} ms  "
        f"tokens {before:7.0f} -> {after:5.0f}  ({', '.join(outcomes)})"
    )
    return cpu


async def main(small: int, large: int) -> int:
    recorder = Recorder()
    recorder.install()
    print(f"compaction cost, scripted model, window 4096, headroom 512; {small} vs {large} events")
    print("live sessions (automatic compaction; all compactions, then those in the last 1k events)")
    live_small, reads_small = await live(small, recorder)
    live_large, reads_large = await live(large, recorder)
    report(f"live {small} events, all", live_small)
    base = report(
        f"live {small} events, last {min(small, 1000)}",
        [t for t in live_small if t.events_at_start > small - 1000],
    )
    report(f"live {large} events, all", live_large)
    late = report(
        f"live {large} events, last 1000",
        [t for t in live_large if t.events_at_start > large - 1000],
    )
    print(
        f"  reads of one compaction (median of 30): {small} events {reads_small:.2f} ms, "
        f"{large} events {reads_large:.2f} ms"
    )
    print("cold sessions (synthetic events, never compacted; five manual compactions)")
    cold_runs = {size: await cold(size, recorder) for size in (small, large)}
    for size, runs in cold_runs.items():
        first = runs[0]
        print(
            f"  cold {size} events, first: {first.outcome} over the whole backlog, "
            f"cpu {first.cpu_ms:.1f} ms, tokens {first.tokens_before} -> {first.tokens_after}"
        )
    cold_small = report(f"cold {small} events, then", cold_runs[small][1:])
    cold_large = report(f"cold {large} events, then", cold_runs[large][1:])
    ratios = (late / base, reads_large / reads_small, cold_large / cold_small)
    print(
        f"ratio cpu time({large})/time({small}): live {ratios[0]:.2f}, reads {ratios[1]:.2f}, "
        f"cold {ratios[2]:.2f} (target <= {TARGET_RATIO}; about 1 = bounded by the layer)"
    )
    return 0 if max(ratios) <= TARGET_RATIO else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=10_000)
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.small, args.large)))
