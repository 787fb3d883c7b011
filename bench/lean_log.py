"""Event-log rows and bytes per 1,000 turns, before and after coalescing streamed deltas.

Real turns through the facade (scripted model, a real SQLite home): each reply is ``--chars``
characters streamed ``--chunk`` at a time, as a local model streams tokens. "Before" writes one
``ModelTokenDelta`` per streamed piece (the previous behaviour, reproduced by a coalescer that
holds nothing); "after" is the shipped coalescer (first piece at once, then per 50 ms or 256
characters, one at the end). Bytes are the events' payload JSON; rows are every event a turn
appends. Figures are per 1,000 turns, scaled from ``--turns``.

    .venv/bin/python bench/lean_log.py [--turns 50] [--chars 2000] [--chunk 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from functools import partial
from pathlib import Path

import kairox.runtime.turn as turn_module
from kairox.app import AppFacade
from kairox.runtime.deltas import DeltaCoalescer
from kairox.services import Services


async def run(root: Path, turns: int, chars: int, chunk: int) -> tuple[int, int, int]:
    """(rows, payload bytes, delta rows) written by ``turns`` turns."""
    script = root / "script.jsonl"
    reply = ("lorem ipsum dolor sit amet " * (chars // 27 + 1))[:chars]
    script.write_text((json.dumps({"text": reply, "chunk": chunk}) + "\n") * turns)
    workspace = root / "ws"
    workspace.mkdir()
    facade = AppFacade(Services.open(root / "home"), model=f"scripted:{script}")
    try:
        await facade.chat.open("bench", workspace=workspace)
        start = await facade.events.last_seq()
        for i in range(turns):
            await facade.chat.run("bench", f"turn {i}: say something long")
        events = await facade.events.list(after=start)
    finally:
        await facade.aclose()
        facade.close()
    size = sum(len(e.payload.model_dump_json()) for e in events)
    deltas = sum(1 for e in events if e.type == "ModelTokenDelta")
    return len(events), size, deltas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--chunk", type=int, default=4)
    args = parser.parse_args()
    scale = 1000 / args.turns
    results = {}
    original = turn_module.DeltaCoalescer
    for name, coalescer in (
        ("before", partial(DeltaCoalescer, max_chars=1)),  # one row per streamed piece
        ("after", original),
    ):
        turn_module.DeltaCoalescer = coalescer  # type: ignore[misc]
        with tempfile.TemporaryDirectory() as tmp:
            results[name] = asyncio.run(run(Path(tmp), args.turns, args.chars, args.chunk))
    turn_module.DeltaCoalescer = original  # type: ignore[misc]
    print(
        f"lean log: {args.turns} turns, {args.chars}-char replies streamed {args.chunk} at a time,"
        " per 1,000 turns (a shared, loaded machine: counts are exact, not timings)"
    )
    for name, (rows, size, deltas) in results.items():
        print(
            f"  {name:<6}  rows {rows * scale:>10,.0f}  bytes {size * scale:>13,.0f}"
            f"  delta rows {deltas * scale:>10,.0f}"
        )
    (rows_b, size_b, _), (rows_a, size_a, _) = results["before"], results["after"]
    print(f"  after/before: rows {rows_a / rows_b:.3f}x, bytes {size_a / size_b:.3f}x")


if __name__ == "__main__":
    main()
