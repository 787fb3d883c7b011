"""Memory search quality: recall@5 of ``facade.memory.search`` on the labelled set shipped with
the tests (``tests/data/memory_search_labelled.json``: 52 memories, one paraphrased query each,
written so the query rarely shares a word with its memory).

Each query's expected memory is looked for in the top 5. Printed beside the same-run baseline,
the substring search ``memory list --search`` did before (a memory matched only when its key or
body contained the query). Run: ``.venv/bin/python bench/memory_search.py``. Figures depend on
the embedder only (no timing); the machine's load does not change them.

Each embedder runs twice: with the set's keys (``db.engine``) and with random UUID keys, as
LangMem's tools name every memory (seeded, so the figures repeat). A key that carries no words
must not cost recall.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

from kairox.app import AppFacade
from kairox.core.ids import workspace_id_for
from kairox.core.types import Actor, MemoryScope
from kairox.services import Services

LABELLED = Path(__file__).parents[1] / "tests" / "data" / "memory_search_labelled.json"
EMBEDDERS = ("hashing", "sentence-transformers:all-MiniLM-L6-v2")
K = 5
KEYS = ("labelled", "uuid")


async def recall_at_k(
    embedder: str, data: dict[str, list[dict[str, str]]], keys: str
) -> tuple[float, float]:
    """(search recall@K, substring-baseline recall@K) with ``embedder`` configured and the
    memories' keys as labelled or random UUIDs (``keys``)."""
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        (workspace / ".kairox").mkdir(parents=True)
        (workspace / ".kairox" / "config.toml").write_text(
            f'[retrieval]\nembedder = "{embedder}"\n', encoding="utf-8"
        )
        facade = AppFacade(Services.open(home))
        try:
            memories = facade.services.memories
            ids: dict[str, str] = {}
            for m in data["memories"]:
                if keys == "uuid":
                    m = {**m, "key": str(uuid.UUID(int=rng.getrandbits(128), version=4))}
                record = memories.propose(
                    MemoryScope.WORKSPACE,
                    m["key"],
                    m["body"],
                    workspace_id=workspace_id_for(workspace),
                    session_id=None,
                )
                ids[m["id"]] = memories.accept(record.id, actor=Actor.USER).id
            found = baseline = 0
            for q in data["queries"]:
                hits = await facade.memory.search(q["query"], workspace=workspace, k=K)
                found += ids[q["expected"]] in {h.record.id for h in hits}
                needle = q["query"].lower()
                substring = [
                    i
                    for m in data["memories"]
                    if needle in m["body"].lower() or needle in m["key"].lower()
                    for i in [ids[m["id"]]]
                ][:K]
                baseline += ids[q["expected"]] in substring
            total = len(data["queries"])
            return found / total, baseline / total
        finally:
            facade.close()


def main() -> int:
    data = json.loads(LABELLED.read_text(encoding="utf-8"))
    print(
        f"memory search, recall@{K} on {len(data['queries'])} paraphrased queries over "
        f"{len(data['memories'])} memories"
    )
    for embedder in EMBEDDERS:
        for keys in KEYS:
            started = time.perf_counter()
            name = f"{embedder}, {keys} keys"
            try:
                found, baseline = asyncio.run(recall_at_k(embedder, data, keys))
            except Exception as exc:  # the embeddings extra may be missing
                print(f"  {name:<54} skipped: {exc}")
                continue
            ratio = f"{found / baseline:.1f}x" if baseline else "n/a (baseline 0)"
            print(
                f"  {name:<54} recall@{K} {found:.3f}   substring baseline {baseline:.3f}   "
                f"ratio {ratio}   ({time.perf_counter() - started:.1f} s)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
