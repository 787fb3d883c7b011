"""Benchmark CLI start-up: ``kairox memory list`` against a bare ``python -c pass``.

Run: ``.venv/bin/python bench/cli_startup.py [--runs 15]``. Each row runs in a fresh subprocess,
the rows interleaved run by run, against a temporary home holding one memory; the figure is the
median of the runs, wall-clock and CPU (user + system of the child, which other jobs on a shared
machine inflate less). The baseline, measured in the same run, is a bare interpreter; the third
row imports every command module, which is what each command paid before the root group became
lazy. Target: ``memory list`` within about 0.3 s, i.e. a small multiple of the bare interpreter.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 0.3


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def prepare(root: Path) -> tuple[dict[str, str], Path]:
    env = dict(os.environ)
    env.update(
        KAIROX_HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "xdg-config"),
        XDG_DATA_HOME=str(root / "xdg-data"),
    )
    workspace = root / "ws"
    workspace.mkdir()
    seed = (
        "try:\n"
        "    from kairox.services import Services\n"
        "except ImportError:  # the layout before kairox.services\n"
        "    from kairox.runtime.services import Services\n"
        "from kairox.core.ids import workspace_id_for\n"
        "from kairox.core.types import MemoryScope\n"
        "s = Services.open()\n"
        f"s.memories.propose(MemoryScope.WORKSPACE, 'style', 'Tabs, not spaces.',"
        f" workspace_id=workspace_id_for({str(workspace)!r}), session_id='ses_b', turn=1)\n"
        "s.close()\n"
    )
    subprocess.run([sys.executable, "-c", seed], env=env, check=True)
    return env, workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kairox-bench-startup-") as tmp:
        env, workspace = prepare(Path(tmp))
        rows = {
            "python -c pass (baseline)": [sys.executable, "-c", "pass"],
            "kairox memory list": [
                *(sys.executable, "-m", "kairox", "memory", "list"),
                *("--workspace", str(workspace)),
            ],
            "import every command module": [
                sys.executable,
                "-c",
                "import kairox.cli.commands",
            ],
        }
        for argv in rows.values():  # warm the file cache and the bytecode
            run_once(argv, env)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
        for _ in range(args.runs):
            for name, argv in rows.items():
                samples[name].append(run_once(argv, env))
    medians = {
        name: (
            statistics.median(w for w, _ in runs),
            statistics.median(c for _, c in runs),
        )
        for name, runs in samples.items()
    }
    base_wall, base_cpu = medians["python -c pass (baseline)"]
    print(f"CLI start-up, median of {args.runs} runs (wall s / CPU s, and x baseline)")
    for name, (wall, cpu) in medians.items():
        print(
            f"  {name:<30} {wall:6.3f} s  {cpu:6.3f} s CPU"
            f"   x{wall / base_wall:5.1f} wall  x{cpu / base_cpu:5.1f} CPU"
        )
    wall, cpu = medians["kairox memory list"]
    verdict = "met" if wall <= TARGET_S else "missed"
    print(
        f"kairox memory list: {wall:.3f} s wall ({cpu:.3f} s CPU) against a {base_wall:.3f} s "
        f"bare interpreter: ratio {wall / base_wall:.1f}; target <= {TARGET_S} s {verdict}"
    )


if __name__ == "__main__":
    main()
