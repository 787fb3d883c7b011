"""``memory import`` speed at 1k, 10k and 100k entries, next to a baseline measured in the same run.

The measured path is what ``kairox memory import`` runs: parse the JSON export, then import every
entry (propose + accept, each an event and a projection row) in one transaction, in a fresh home.
The baseline is the least any import can do: ``json.load`` plus one ``executemany`` into a scratch
table of the same database file. The ratio says how much the events and projections cost.

    .venv/bin/python bench/memory_import.py [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from kairox.app import AppFacade


def export_text(n: int) -> str:
    memories = [
        {"scope": "workspace" if i % 2 else "user", "key": f"fact.{i}", "body": f"fact number {i}"}
        for i in range(n)
    ]
    return json.dumps({"format": "kairox-memories", "version": 1, "memories": memories})


def baseline(text: str, db_path: Path) -> float:
    start = time.perf_counter()
    rows = [(m["scope"], m["key"], m["body"]) for m in json.loads(text)["memories"]]
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("CREATE TABLE scratch(scope TEXT, key TEXT, body TEXT)")
        conn.executemany("INSERT INTO scratch VALUES (?, ?, ?)", rows)
    conn.close()
    return time.perf_counter() - start


def measured(text: str, home: Path, workspace: Path) -> tuple[float, int]:
    facade = AppFacade.open(home)
    try:
        start = time.perf_counter()
        report = asyncio.run(facade.memory.import_(text, workspace=workspace, fmt="json"))
        elapsed = time.perf_counter() - start
    finally:
        facade.close()
    return elapsed, len(report.created)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    print(f"{'entries':>8} {'import s':>9} {'entries/s':>10} {'baseline s':>11} {'ratio':>7}")
    for n in (int(s) for s in args.sizes.split(",")):
        text = export_text(n)
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            workspace = root / "ws"
            workspace.mkdir()
            took, created = measured(text, root / "home", workspace)
            assert created == n, (created, n)
            base = baseline(text, root / "home" / "kairox.db")
        print(f"{n:>8} {took:>9.2f} {n / took:>10.0f} {base:>11.3f} {took / base:>6.0f}x")


if __name__ == "__main__":
    main()
