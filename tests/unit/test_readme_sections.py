"""The README's front matter (issue 24): why Kairox, every extra in a table, and the benchmark
tables moved to docs/benchmarks.md behind one summary line."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def test_why_kairox_names_what_sets_it_apart() -> None:
    why = section("Why Kairox").lower()
    for point in ("approv", "provenance", "append-only", "replay", "budget", "recall", "postgres"):
        assert point in why, point


def test_the_extras_table_lists_every_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    rows = re.findall(r"^\| `([a-z-]+)` \|", section("Install"), flags=re.M)
    assert sorted(rows) == sorted(set(extras) - {"dev"})


def test_the_benchmark_tables_live_in_docs() -> None:
    bench = section("Benchmarks")
    assert "](docs/benchmarks.md)" in bench
    assert "|---" not in bench  # no table left in the README
    docs = (ROOT / "docs" / "benchmarks.md").read_text()
    assert docs.startswith("# Benchmarks")
    assert docs.count("|---") >= 4  # the tables moved, not dropped
    for script in re.findall(r"`(bench/[a-z_]+\.py)`", docs):
        assert (ROOT / script).exists(), script
