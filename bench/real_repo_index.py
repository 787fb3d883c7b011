"""``kairox index`` on a large real tree: files/s, peak RSS, a keyword query's p50, and the
re-index of the unchanged tree.

The tree defaults to the ``torch`` package installed beside Kairox (``make`` installs it: about
12,000 files, C++ headers and Python, so it is there with no network at bench time);
``--tree DIR`` for another, e.g. CPython's ``Lib/`` or ``transformers``. It is mirrored into a
scratch directory (hard links where the file system allows, else copies; the index lives in a
home of its own and nothing of the venv is touched), then:
  * ``kairox index`` in a fresh process (hashing embedder, the default): wall s, files/s, chunks,
    the child's peak RSS; baseline: reading and hashing (SHA-256) every file of the tree, same run;
  * ``kairox index`` again, nothing changed (target <= 2 s); baseline: a bare walk + stat, and
    the CLI's start-up alone (``kairox index --help``);
  * a fresh ``kairox search`` (start-up, the refresh's stat scan, the saved keyword index loaded,
    hybrid ranking), median of three queries; baseline: ``kairox index --help``;
  * keyword queries (BM25 side, top 10) in one process after a warm-up: p50 ms; baseline: bm25s
    over the same chunks and stems (as ``bench/retrieval_speed.py``).
Run: ``nice .venv/bin/python bench/real_repo_index.py [--tree DIR]``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Queries a user of each tree would type (written for the tree, not tuned on any result).
QUERIES = {
    "torch": [
        "autograd function backward",
        "cuda stream synchronize",
        "TORCH_CHECK",
        "dispatch key set",
        "tensor options dtype device",
        "optimizer zero grad step",
        "conv2d padding stride dilation",
        "quantized linear weight packing",
        "dataloader worker seed",
        "sparse coo tensor",
    ],
    "transformers": [
        "attention mask",
        "attention_mask",
        "mask",
        "tokenizer padding side",
        "load pretrained weights from safetensors",
        "rotary position embedding",
        "beam search generation",
        "gradient checkpointing",
        "cross entropy loss ignore index",
        "quantization config",
    ],
}
GENERIC = ["error handling", "parse arguments", "read file", "test case", "configuration"]


def default_tree() -> Path:
    for package in ("torch", "transformers"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations)))
    raise SystemExit("neither torch nor transformers is installed: pass --tree DIR")


def mirror(source: Path, target: Path) -> None:
    """``source`` under ``target``: hard links (same inode, same mtime) when on one file
    system, else copies."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"),
                    copy_function=link, symlinks=True)  # fmt: skip


def kairox(env: dict[str, str], *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kairox", *args], env=env, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return time.perf_counter() - started, done.stdout


def read_and_hash(root: Path) -> tuple[float, int]:
    started = time.perf_counter()
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            hashlib.sha256((Path(folder) / name).read_bytes()).digest()
            count += 1
    return time.perf_counter() - started, count


def walk_and_stat(root: Path) -> float:
    started = time.perf_counter()
    for folder, _, names in os.walk(root):
        for name in names:
            (Path(folder) / name).stat()
    return time.perf_counter() - started


def keyword_p50(home: Path, tree: Path, queries: list[str]) -> tuple[float, float, dict[str, int]]:
    """(kairox keyword p50 ms, bm25s p50 ms, each query's hit count) in this process."""
    import bm25s

    from kairox.core.ids import workspace_id_for
    from kairox.retrieval.embeddings import create_embedder
    from kairox.retrieval.search import HybridSearcher, query_terms
    from kairox.store.chunks_sqlite import SqliteChunkStore
    from kairox.store.db import Database
    from kairox.store.terms import QueryStemmer
    from kairox.store.words import words

    db = Database.open(home / "kairox.db")
    searcher = HybridSearcher(SqliteChunkStore(db), create_embedder("hashing"))
    ws = workspace_id_for(tree)
    searcher.keyword(ws, "warm", 1)
    ours: list[float] = []
    counts = {}
    for _ in range(3):
        for text in queries:
            started = time.perf_counter()
            hits = searcher.keyword(ws, text, 10)
            ours.append((time.perf_counter() - started) * 1000)
            counts[text] = len(hits)
    stemmer = QueryStemmer()
    docs = searcher.chunks.keyword_documents(ws)
    corpus = [words(f"{path} {text}") for _, (path, text) in docs]
    stems = stemmer.tokens({w for doc in corpus for w in doc})
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index([[t for w in doc for t in stems[w]] for doc in corpus], show_progress=False)
    theirs: list[float] = []
    for _ in range(3):
        for text in queries:
            started = time.perf_counter()
            query = [s for s in stemmer.stems(query_terms(text)) if s in retriever.vocab_dict]
            if query:
                retriever.retrieve([query], k=10, show_progress=False)
            theirs.append((time.perf_counter() - started) * 1000)
    searcher.close()
    db.close()
    return statistics.median(ours), statistics.median(theirs), counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=None)
    args = parser.parse_args()
    source = (args.tree or default_tree()).resolve()
    with tempfile.TemporaryDirectory(prefix="kairox-bench-repo-") as tmp:
        root = Path(tmp)
        tree = root / source.name
        mirror(source, tree)
        home = root / "home"
        env = dict(os.environ, KAIROX_HOME=str(home), XDG_CONFIG_HOME=str(root / "xdg"))
        hashed, files = read_and_hash(tree)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        first, out = kairox(env, "index", str(tree), "--json")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        summary = json.loads(out)
        again, _ = kairox(env, "index", str(tree), "--json")
        walked = walk_and_stat(tree)
        startup, _ = kairox(env, "index", "--help")
        queries = QUERIES.get(source.name, GENERIC)
        # What a user waits for: start-up, the workspace's refresh (a stat scan), the saved
        # keyword index and the vectors loaded, the hybrid ranking, the hits printed.
        searches = [kairox(env, "search", q, "--workspace", str(tree), "--json")[0]
                    for q in queries[:3]]  # fmt: skip
        ours, theirs, counts = keyword_p50(home, tree, queries)
    print(f"## A real tree: {source} ({files:,} files)")
    skipped = summary.pop("skipped", [])
    reasons = {
        r: sum(1 for s in skipped if s["reason"] == r) for r in {s["reason"] for s in skipped}
    }
    print(f"index summary: {json.dumps(summary)}; skipped {len(skipped)}: {json.dumps(reasons)}")
    print("| figure | Kairox | same-run baseline | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| first `kairox index`, s (files/s) | {first:.1f} ({files / first:.0f}/s) | "
          f"read + SHA-256 of every file {hashed:.1f} s | {first / hashed:.1f}x |")  # fmt: skip
    print(f"| peak RSS of the index process, MB | {max(peak, before) / 1024:.0f} | | |")
    verdict = "met" if again <= 2.0 else "MISSED"
    print(f"| re-index unchanged, s (target <= 2 s: {verdict}) | {again:.2f} | "
          f"walk + stat {walked:.2f} s | {again / walked:.1f}x |")  # fmt: skip
    print(f"| CLI start-up alone (`kairox index --help`), s | {startup:.2f} | | |")
    search = statistics.median(searches)
    print(f"| fresh `kairox search`, s (median of {len(searches)}) | {search:.2f} | "
          f"`kairox index --help` {startup:.2f} s | {search / startup:.1f}x |")  # fmt: skip
    print(f"| keyword query p50 ms (top 10, {len(queries)} queries x 3) | {ours:.2f} | "
          f"bm25s {theirs:.2f} ms | {ours / theirs:.1f}x |")  # fmt: skip
    print("hits per query: " + ", ".join(f"{q!r} {n}" for q, n in counts.items()))


if __name__ == "__main__":
    main()
