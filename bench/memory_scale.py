"""200,000 memories: the import (with its memory index), the first and later ``send``, ``memory
search`` and the ``ContextAssembled`` size, each beside a same-run baseline.

Before issue 34, after importing 100,000 workspace memories the first ``kairox send`` took 677 s
(it rebuilt the memory search index), later sends 10-13 s against 0.91 s without them, and each
turn wrote a 268 KB ``ContextAssembled``. Here, in one run, for user memories (seen from every
workspace) and for workspace memories (``--scope``, both by default):

* ``kairox memory import`` of ``--memories`` memories (the memory index built in the same
  command), with its seconds per 1,000 entries;
* the first ``kairox send`` after it (target <= 3 s; beside a first send in a home without
  memories) and later sends (p50) in the importing workspace and in another one, beside the same
  sends in a home without memories (target <= 1.5x), and their CPU seconds (user + system)
  beside the same sends': what the memories cost a turn, less shaken by a loaded machine;
* ``memory search`` p50 on the hashing embedder (target <= 50 ms): in process
  (``facade.memory.search``, the index loaded) beside the same queries in the home without
  memories, and as ``kairox memory search`` in a fresh process beside the same command there;
* the largest ``ContextAssembled`` event of those turns (target < 16 KB).

Every send is a fresh ``kairox`` process with a scripted model (no model cost). At 200,000 the
run is long: the two imports take most of it, about 25 minutes in all on the loaded 2-core
machine of docs/benchmarks.md (more than the 5 minutes ``make bench`` aims at; ``--scope user``
or ``--memories 20000`` for a shorter one).

    .venv/bin/python bench/memory_scale.py [--memories 200000] [--sends 3] [--scope both]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kairox.app import AppFacade

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "river",
    "stone",
    "cloud",
    "forest",
    "ember",
    "lantern",
    "harbor",
    "violet",
    "copper",
    "meadow",
    "signal",
    "orbit",
    "maple",
    "quartz",
    "tundra",
    "velvet",
]
QUERIES = [f"{WORDS[i % 20]} {WORDS[(i * 7 + 3) % 20]}" for i in range(20)]


def export(n: int, scope: str = "user") -> str:
    memories = [
        {
            "scope": scope,
            "key": f"fact.{i}",
            "body": f"fact {i} about {WORDS[i % 20]} and {WORDS[i * 7 % 20]} no. {i * 31 % 997}",
        }
        for i in range(n)
    ]
    return json.dumps({"format": "kairox-memories", "version": 1, "memories": memories})


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        self.home = root / "home"
        self.script = root / "script.jsonl"
        self.script.write_text((json.dumps({"text": "ok"}) + "\n") * 100, encoding="utf-8")
        self.env = {**os.environ, "KAIROX_HOME": str(self.home)}
        self.cpu = 0.0  # the CPU seconds (user + system) of the last command
        self.cpus: dict[str, list[float]] = {}  # the CPU seconds of each send, by workspace

    def workspace(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(exist_ok=True)
        return path

    def kx(self, *args: str) -> tuple[float, str]:
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [sys.executable, "-m", "kairox", *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"kairox {' '.join(args[:2])} failed: {done.stderr.strip()[-400:]}")
        return elapsed, done.stdout

    def send(self, workspace: Path, text: str) -> float:
        model = f"scripted:{self.script}"
        elapsed = self.kx("send", "--workspace", str(workspace), "--model", model, text)[0]
        self.cpus.setdefault(workspace.name, []).append(self.cpu)
        return elapsed

    def largest_trace(self, workspace: Path) -> int:
        _, out = self.kx("events", "--workspace", str(workspace), "--json")
        sizes = [len(json.dumps(e)) for e in json.loads(out) if e["type"] == "ContextAssembled"]
        return max(sizes, default=0)


async def search_p50(home: Path, workspace: Path) -> float:
    facade = AppFacade.open(home)
    try:
        await facade.memory.search(QUERIES[0], workspace=workspace, k=10)  # loads the index
        times = []
        for query in QUERIES:
            started = time.perf_counter()
            await facade.memory.search(query, workspace=workspace, k=10)
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)
    finally:
        facade.close()


def cli_search_p50(home: Home, workspace: Path, runs: int = 3) -> float:
    """``kairox memory search`` in a fresh process (its start included), p50 in ms."""
    times = [
        home.kx("memory", "search", QUERIES[i], "--workspace", str(workspace))[0] * 1000
        for i in range(runs)
    ]
    return statistics.median(times)


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def run(tmp: Path, count: int, scope: str, sends: int) -> None:
    big, empty = Home(tmp / f"big-{scope}"), Home(tmp / f"empty-{scope}")
    ws, other = big.workspace("ws"), big.workspace("other")
    base = empty.workspace("ws")
    source = tmp / f"export-{scope}.json"
    source.write_text(export(count, scope), encoding="utf-8")
    imported, _ = big.kx("memory", "import", str(source), "--workspace", str(ws))
    print(f"# {count:,} {scope} memories")
    print(f"import with its memory index: {imported:.1f} s "
          f"({1000 * imported / count:.2f} s per 1,000)")  # fmt: skip
    first = big.send(ws, "what do I know about river stone?")
    later: dict[str, list[float]] = {"ws": [], "other": [], "baseline": []}
    first_base = empty.send(base, "what do I know about river stone?")  # its first turn
    first_other = big.send(other, "what do I know about river stone?")
    for i in range(sends):  # interleaved: the same moments of load
        later["ws"].append(big.send(ws, f"tell me about {QUERIES[i]}"))
        later["other"].append(big.send(other, f"tell me about {QUERIES[i]}"))
        later["baseline"].append(empty.send(base, f"tell me about {QUERIES[i]}"))
    p50 = {name: statistics.median(times) for name, times in later.items()}
    print(f"first send after the import: {first:.2f} s beside {first_base:.2f} s for a first "
          f"send without memories: {first / first_base:.2f}x (target <= 3 s: "
          f"{verdict(first <= 3)}); in another workspace {first_other:.2f} s")  # fmt: skip
    # CPU seconds of the same sends: what the memories cost a turn, less shaken by the load.
    cpu = {name: statistics.median(times[1:] or times) for name, times in big.cpus.items()}
    cpu_base = statistics.median(empty.cpus["ws"][1:])
    print(f"later sends' CPU p50: {cpu['ws']:.2f} s (ws), {cpu['other']:.2f} s (other) beside "
          f"{cpu_base:.2f} s without memories: {cpu['ws'] / cpu_base:.2f}x, "
          f"{cpu['other'] / cpu_base:.2f}x")  # fmt: skip
    for name in ("ws", "other"):
        ratio = p50[name] / p50["baseline"]
        print(f"later sends ({name}) p50 {p50[name]:.2f} s beside {p50['baseline']:.2f} s "
              f"without memories: {ratio:.2f}x "
              f"(target <= 1.5x: {verdict(ratio <= 1.5)})")  # fmt: skip
    search = asyncio.run(search_p50(big.home, ws))
    floor = asyncio.run(search_p50(empty.home, base))
    print(f"memory search p50 in process {search:.1f} ms (hashing) beside {floor:.1f} ms without "
          f"memories (target <= 50 ms: {verdict(search <= 50)})")  # fmt: skip
    cli, cli_base = cli_search_p50(big, ws), cli_search_p50(empty, base)
    print(f"kairox memory search (fresh process) p50 {cli:.0f} ms beside {cli_base:.0f} ms "
          f"without memories: {cli / cli_base:.2f}x")  # fmt: skip
    largest = max(big.largest_trace(ws), big.largest_trace(other))
    print(f"largest ContextAssembled: {largest / 1024:.1f} KB beside "
          f"{empty.largest_trace(base) / 1024:.1f} KB without memories "
          f"(target < 16 KB: {verdict(largest < 16 * 1024)})")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=200_000)
    parser.add_argument("--sends", type=int, default=3)
    parser.add_argument("--scope", choices=("user", "workspace", "both"), default="both")
    args = parser.parse_args()
    scopes = ("user", "workspace") if args.scope == "both" else (args.scope,)
    with tempfile.TemporaryDirectory(prefix="kairox-memscale-") as tmp:
        for scope in scopes:
            run(Path(tmp), args.memories, scope, args.sends)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
