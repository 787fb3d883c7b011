"""Benchmark the streaming ``<memory>`` filter: MB/s on 4-character deltas, and its linearity.

Run: ``.venv/bin/python bench/markers.py [--mb 4] [--delta 4]``. The baseline, measured in the
same run, is a loop that only joins the deltas. Targets: >= 5 MB/s, time(8 MB)/time(1 MB) <= 9.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

from kairox.memory.markers import MarkerStream, parse_memory_markers

TARGET_MBPS = 5.0
TARGET_LINEARITY = 9.0

_PROSE = (
    "The assembler walks the history from newest to oldest and stops when the budget is spent. "
    "Tool results travel with the call that produced them, so a pair is kept or dropped whole.\n"
    "A reply may compare `a < b` or mention <memo> and <memorable> tags without starting one.\n"
)
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


def timed(fn: Callable[[list[str]], tuple[str, int]], deltas: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn(deltas)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0, help="reply size for the MB/s figure")
    parser.add_argument("--delta", type=int, default=4, help="characters per delta")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = parser.parse_args()

    mb = 1_000_000
    text = build_reply(int(args.mb * mb))
    deltas = split(text, args.delta)
    visible, found = run_stream(deltas)
    batch = parse_memory_markers(text)
    if visible != batch.visible or found != len(batch.markers):
        raise SystemExit("streamed output differs from batch output")

    t_stream = timed(run_stream, deltas, args.repeat)
    t_join = timed(run_join, deltas, args.repeat)
    size_mb = len(text.encode()) / mb
    small = split(build_reply(1 * mb), args.delta)
    large = split(build_reply(8 * mb), args.delta)
    t_small = timed(run_stream, small, args.repeat)
    t_large = timed(run_stream, large, max(1, args.repeat - 1))
    start = time.perf_counter()
    parse_memory_markers(text)
    t_batch = time.perf_counter() - start

    stream_mbps = size_mb / t_stream
    linearity = t_large / t_small
    rows = [
        ("reply", f"{size_mb:.2f} MB in {len(deltas):,} deltas of {args.delta} chars", ""),
        ("markers found / rejected", f"{len(batch.markers):,} / {len(batch.rejected):,}", ""),
        ("baseline: join deltas only", f"{size_mb / t_join:8.1f} MB/s", f"{t_join:.3f} s"),
        ("MarkerStream.feed + close", f"{stream_mbps:8.1f} MB/s", f"{t_stream:.3f} s"),
        ("stream cost / baseline cost", f"{t_stream / t_join:8.1f} x", ""),
        ("batch parse_memory_markers", f"{size_mb / t_batch:8.1f} MB/s", f"{t_batch:.3f} s"),
        ("linearity time(8 MB)/time(1 MB)", f"{linearity:8.2f}", f"{t_large:.2f} / {t_small:.2f}"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'bench/markers.py':<{width}}  {'figure':<26}  time")
    print("-" * (width + 40))
    for name, figure, extra in rows:
        print(f"{name:<{width}}  {figure:<26}  {extra}")
    print("-" * (width + 40))
    ok_speed = stream_mbps >= TARGET_MBPS
    ok_linear = linearity <= TARGET_LINEARITY
    print(f"target >= {TARGET_MBPS} MB/s: {'PASS' if ok_speed else 'FAIL'}")
    print(f"target linearity <= {TARGET_LINEARITY}: {'PASS' if ok_linear else 'FAIL'}")
    return 0 if ok_speed and ok_linear else 1


if __name__ == "__main__":
    raise SystemExit(main())
