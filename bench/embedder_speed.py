"""MiniLM without the import tax: ``sentence-transformers:all-MiniLM-L6-v2`` on ONNX Runtime
against the same model on sentence-transformers (torch), both from the same weights.

Figures, each beside its same-run baseline:
  * a fresh ``kairox memory search`` process with MiniLM configured, median wall time: the
    default (ONNX Runtime) against ``KAIROX_EMBEDDINGS_RUNTIME=torch``, runs interleaved; and a
    bare ``python -c pass``. Target: <= 1 s on a quiet machine.
  * indexing throughput, chunks/s: Kairox's own source chunked as ``kairox index`` chunks it,
    embedded by each backend in turn (same process, same threads), best of the rounds. Target:
    ONNX >= sentence-transformers.
  * agreement: the lowest cosine between the two backends' vectors of those chunks (>= 0.999).
  * install size: what torch + sentence-transformers + transformers take on disk against
    onnxruntime + tokenizers + onnx.
Run: ``.venv/bin/python bench/embedder_speed.py [--runs 5] [--chunks 512]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kairox.retrieval.chunking import chunk_text
from kairox.retrieval.embeddings import create_embedder

MODEL = "sentence-transformers:all-MiniLM-L6-v2"
TARGET_S = 1.0


def run_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def startup(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kairox-bench-embed-") as tmp:
        root = Path(tmp)
        env = dict(os.environ)
        env.update(KAIROX_HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "xdg"))
        workspace = root / "ws"
        (workspace / ".kairox").mkdir(parents=True)
        (workspace / ".kairox" / "config.toml").write_text(
            f'[retrieval]\nembedder = "{MODEL}"\n', encoding="utf-8"
        )
        seed = (
            "from kairox.services import Services\n"
            "from kairox.core.ids import workspace_id_for\n"
            "from kairox.core.types import Actor, MemoryScope\n"
            "s = Services.open()\n"
            f"r = s.memories.propose(MemoryScope.WORKSPACE, 'db.engine', 'We use PostgreSQL 17',"
            f" workspace_id=workspace_id_for({str(workspace)!r}), session_id=None)\n"
            "s.memories.accept(r.id, actor=Actor.USER)\n"
            "s.close()\n"
        )
        subprocess.run([sys.executable, "-c", seed], env=env, check=True)
        search = [sys.executable, "-m", "kairox", "memory", "search", "which database"]
        search += ["--workspace", str(workspace)]
        rows = {
            "python -c pass (baseline)": (env, [sys.executable, "-c", "pass"]),
            "memory search, ONNX Runtime": (env, search),
            "memory search, torch (baseline)": (
                {**env, "KAIROX_EMBEDDINGS_RUNTIME": "torch"},
                search,
            ),
        }
        for row_env, argv in rows.values():  # warm the file cache (and build the ONNX graph)
            run_once(argv, row_env)
        samples: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(runs):
            for name, (row_env, argv) in rows.items():
                samples[name].append(run_once(argv, row_env))
    medians = {name: statistics.median(s) for name, s in samples.items()}
    print(f"Fresh-process `kairox memory search` with {MODEL}, median of {runs} runs")
    for name, value in medians.items():
        print(f"  {name:<34} {value:7.3f} s")
    fast, slow = medians["memory search, ONNX Runtime"], medians["memory search, torch (baseline)"]
    verdict = "met" if fast <= TARGET_S else "missed (quiet-machine target)"
    print(
        f"  ONNX {fast:.3f} s vs torch {slow:.3f} s: x{slow / fast:.1f} faster; "
        f"target <= {TARGET_S} s {verdict}"
    )


def corpus(count: int) -> list[str]:
    source = Path(__file__).resolve().parents[1] / "src" / "kairox"
    texts: list[str] = []
    for path in sorted(source.rglob("*.py")):
        texts.extend(c.text for c in chunk_text(path.read_text(encoding="utf-8"), str(path)))
        if len(texts) >= count:
            break
    return texts[:count]


def throughput(count: int, rounds: int) -> None:
    texts = corpus(count)
    os.environ["KAIROX_EMBEDDINGS_RUNTIME"] = "torch"
    torch_backend = create_embedder(MODEL)
    os.environ.pop("KAIROX_EMBEDDINGS_RUNTIME")
    onnx_backend = create_embedder(MODEL)
    names = {"ONNX Runtime": onnx_backend, "sentence-transformers (baseline)": torch_backend}
    for backend in names.values():
        backend.embed(texts[:32])  # load
    best = dict.fromkeys(names, float("inf"))
    vectors = {}
    for _ in range(rounds):
        for name, backend in names.items():
            start = time.perf_counter()
            vectors[name] = backend.embed(texts)
            best[name] = min(best[name], time.perf_counter() - start)
    mean_chars = sum(map(len, texts)) / len(texts)
    print(
        f"Indexing throughput, {len(texts)} chunks of Kairox's source "
        f"(mean {mean_chars:.0f} chars), best of {rounds}"
    )
    for name, seconds in best.items():
        print(f"  {name:<34} {len(texts) / seconds:8.1f} chunks/s")
    a, b = vectors["ONNX Runtime"], vectors["sentence-transformers (baseline)"]
    ratio = best["sentence-transformers (baseline)"] / best["ONNX Runtime"]
    print(f"  ONNX / sentence-transformers throughput: x{ratio:.2f} (target >= 1)")
    print(
        f"  lowest cosine between the backends' vectors: {float((a * b).sum(1).min()):.6f} "
        "(target >= 0.999)"
    )


def installed_mb(package: str) -> float:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return 0.0
    folder = Path(next(iter(spec.submodule_search_locations)))
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def install_size() -> None:
    heavy = ["torch", "sentence_transformers", "transformers"]
    light = ["onnxruntime", "tokenizers", "onnx"]
    heavy_mb = {p: installed_mb(p) for p in heavy}
    light_mb = {p: installed_mb(p) for p in light}
    print("Install size on disk (MB)")
    print(
        "  torch path:  "
        + ", ".join(f"{p} {mb:.0f}" for p, mb in heavy_mb.items())
        + f" = {sum(heavy_mb.values()):.0f}"
    )
    print(
        "  ONNX path:   "
        + ", ".join(f"{p} {mb:.0f}" for p, mb in light_mb.items())
        + f" = {sum(light_mb.values()):.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    startup(args.runs)
    throughput(args.chunks, args.rounds)
    install_size()


if __name__ == "__main__":
    main()
