"""Benchmark the streaming ``<memory>`` filter: MB/s on 4-character deltas, and its linearity.

Run: ``.venv/bin/python bench/markers.py [--mb 4] [--delta 4]``. The baseline, measured in the
same run, is a loop that only joins the deltas. Targets: >= 5 MB/s, time(8 MB)/time(1 MB) <= 9.
Targets are judged on this process's CPU time, which other jobs on a shared machine do not
inflate the way they inflate wall-clock time; wall-clock MB/s is printed alongside.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable
from typing import NamedTuple

from kairox.memory.markers import MarkerStream, parse_memory_markers

TARGET_MBPS = 5.0
TARGET_LINEARITY = 9.0

_PROSE = (
    "The assembler walks the history from newest to oldest and stops when the budget is spent. "
    "Tool results travel with the call that produced them, so a pair is kept or dropped whole.\n"
    "Call `assemble()` once per turn; it returns the messages and a trace of what was left out.\n"
)
_NEAR_MISS = "A reply may compare `a < b`, or mention <memo> and <memorable> without a marker.\n"
_MARKERS = (
    '<memory scope="session">The user is reviewing the retrieval code this afternoon.</memory>\n',
    "<memory scope='user' key='editor.font'>JetBrains Mono 14px.</memory>\n",
    '<memory key="commit.style" scope="workspace">Conventional Commits with a scope.</memory>\n',
    '<memory scope="global">An unknown scope is rejected, never saved.</memory>\n',
)
_FENCE = (
    "```python\n"
    "def render(note: str) -> str:\n"
    "    return f'<memory scope=\"session\">{note}</memory>'  # code, not a proposal\n"
    "```\n"
)


def build_reply(size: int) -> str:
    """Prose, inline code, fenced code and markers (valid and rejected), about ``size`` chars."""
    block = []
    for k in range(16):
        block.append(_PROSE)
        if k % 4 == 1:
            block.append(_NEAR_MISS)
        if k % 3 == 0:
            block.append(_MARKERS[k % len(_MARKERS)])
        if k % 5 == 0:
            block.append(_FENCE)
    unit = "".join(block)
    return (unit * (size // len(unit) + 1))[:size]


def split(text: str, width: int) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)]


def run_stream(deltas: list[str]) -> tuple[str, int]:
    stream = MarkerStream()
    feed = stream.feed
    visible: list[str] = []
    count = 0
    for delta in deltas:
        result = feed(delta)
        visible.append(result.visible)
        count += len(result.markers)
    last = stream.close()
    visible.append(last.visible)
    return "".join(visible), count + len(last.markers)


def run_join(deltas: list[str]) -> tuple[str, int]:
    visible: list[str] = []
    for delta in deltas:
        visible.append(delta)
    return "".join(visible), 0


class Timing(NamedTuple):
    cpu: float  # CPU seconds of this process: steady when other jobs share the machine
    wall: float


def timed(fn: Callable[[list[str]], tuple[str, int]], deltas: list[str], repeat: int) -> Timing:
    """Best of ``repeat`` runs, with the garbage collector paused as ``timeit`` does."""
    cpu = wall = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start_cpu, start_wall = time.process_time(), time.perf_counter()
            fn(deltas)
            cpu = min(cpu, time.process_time() - start_cpu)
            wall = min(wall, time.perf_counter() - start_wall)
        finally:
            gc.enable()
    return Timing(cpu, wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0, help="reply size for the MB/s figure")
    parser.add_argument("--delta", type=int, default=4, help="characters per delta")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = parser.parse_args()

    mb = 1_000_000
    text = build_reply(int(args.mb * mb))
    size_mb = len(text.encode()) / mb
    deltas = split(text, args.delta)
    visible, found = run_stream(deltas)
    batch = parse_memory_markers(text)
    if visible != batch.visible or found != len(batch.markers):
        raise SystemExit("streamed output differs from batch output")

    join = timed(run_join, deltas, args.repeat)
    stream = timed(run_stream, deltas, args.repeat)
    whole = timed(lambda _: (parse_memory_markers(text).visible, 0), deltas, args.repeat)
    small = timed(run_stream, split(build_reply(1 * mb), args.delta), 3 * args.repeat)
    large = timed(run_stream, split(build_reply(8 * mb), args.delta), args.repeat)
    linearity = large.cpu / small.cpu
    stream_mbps = size_mb / stream.cpu

    print(
        f"reply: {size_mb:.2f} MB, {len(deltas):,} deltas of {args.delta} chars, "
        f"{len(batch.markers):,} markers, {len(batch.rejected):,} rejected; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    rows = [
        ("baseline: a loop that only joins the deltas", join),
        ("MarkerStream: feed every delta, then close", stream),
        ("batch: parse_memory_markers(whole reply)", whole),
    ]
    head = f"{'measurement':<44} {'MB/s (CPU)':>11} {'MB/s (wall)':>12} {'CPU s':>8}"
    print(head)
    print("-" * len(head))
    for name, t in rows:
        print(f"{name:<44} {size_mb / t.cpu:>11.1f} {size_mb / t.wall:>12.1f} {t.cpu:>8.3f}")
    print("-" * len(head))
    print(f"{'stream cost / baseline cost':<44} {stream.cpu / join.cpu:>11.1f}x")
    print(
        f"{'linearity: time(8 MB) / time(1 MB)':<44} {linearity:>11.2f}"
        f"   ({large.cpu:.2f} s / {small.cpu:.2f} s; 8.00 is exactly linear)"
    )
    ok_speed = stream_mbps >= TARGET_MBPS
    ok_linear = linearity <= TARGET_LINEARITY
    print(f"target: stream >= {TARGET_MBPS:.0f} MB/s (CPU) ... {'PASS' if ok_speed else 'FAIL'}")
    print(
        f"target: linearity <= {TARGET_LINEARITY:.0f} ........... {'PASS' if ok_linear else 'FAIL'}"
    )
    return 0 if ok_speed and ok_linear else 1


if __name__ == "__main__":
    raise SystemExit(main())
