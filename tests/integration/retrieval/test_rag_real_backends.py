"""End to end with real embedding backends: index, re-embed on a model change, hybrid search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kairox.core.errors import RetrievalError
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.embeddings.sentence_transformers import SentenceTransformersEmbedder
from kairox.retrieval.fusion import FusionMethod
from kairox.retrieval.workspace import WorkspaceRagIndex
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database

DOCS = {
    "cooking/pasta.md": "# Pasta\n\nBoil water, add salt, cook the spaghetti for nine minutes.\n",
    "cars/engine.md": "# Engines\n\nThe combustion engine burns fuel to move pistons.\n",
    "pets/dogs.md": "# Dogs\n\nPuppies need walks, chew toys and a lot of sleep.\n",
    "src/retry.py": "def retry(call, attempts=3):\n    for _ in range(attempts):\n"
    "        try:\n            return call()\n        except OSError:\n            pass\n",
}


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "kairox.db")
    yield database
    database.close()


@pytest.fixture
def docs(workspace: Path) -> Path:
    for rel, text in DOCS.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text, encoding="utf-8")
    return workspace


async def test_minilm_finds_paraphrases_bm25_cannot(db: Database, docs: Path) -> None:
    index = WorkspaceRagIndex(
        SqliteChunkStore(db),
        docs,
        embedder=create_embedder("sentence-transformers:all-MiniLM-L6-v2"),
    )
    report = await index.index()
    assert report.files_indexed == 4 and report.chunks_embedded == report.chunks_total == 4
    query = "young canine animals"  # no word in common with the dogs document
    assert index.search_sync(query, k=3, fusion=FusionMethod.BM25) == []
    hits = await index.search(query, k=2)
    assert hits[0].path == "pets/dogs.md"
    hits = await index.search("how long to cook noodles", k=1)
    assert hits[0].path == "cooking/pasta.md"


async def test_switching_from_hashing_to_minilm_reembeds_everything(
    db: Database, docs: Path
) -> None:
    first = await WorkspaceRagIndex(SqliteChunkStore(db), docs).index()
    assert first.model == "hashing:384"
    semantic = WorkspaceRagIndex(
        SqliteChunkStore(db),
        docs,
        embedder=create_embedder("sentence-transformers:all-MiniLM-L6-v2"),
    )
    report = await semantic.index()
    assert report.files_indexed == 0 and report.chunks_embedded == 4
    models = {r[0]: r[1] for r in db.query(
        "SELECT model, count(*) FROM chunk_vectors GROUP BY model")}  # fmt: skip
    assert models == {"hashing:384": 4, "sentence-transformers:all-MiniLM-L6-v2": 4}


def test_unknown_sentence_transformers_model_never_downloads() -> None:
    embedder = SentenceTransformersEmbedder("no-such-org/no-such-model-for-kairox")
    with pytest.raises(RetrievalError, match="never downloads"):
        embedder.embed(["x"])


async def test_openai_backend_on_llama_cpp_server_indexes_and_searches(
    db: Database, docs: Path, llama_embeddings_url: str
) -> None:
    embedder = create_embedder("openai:smollm2", base_url=llama_embeddings_url)
    index = WorkspaceRagIndex(SqliteChunkStore(db), docs, embedder=embedder)
    report = await index.index()
    assert report.model == "openai:smollm2"
    assert report.chunks_embedded == report.chunks_total == 4
    rows = db.query("SELECT DISTINCT dims FROM chunk_vectors WHERE model = 'openai:smollm2'")
    assert [r[0] for r in rows] == [576]
    hits = await index.search("spaghetti salt water", k=2)
    assert hits[0].path == "cooking/pasta.md"
    (docs / "pets/dogs.md").write_text("# Cats\n\nKittens purr and sleep all day.\n")
    again = await index.index()
    assert again.files_indexed == 1 and again.chunks_embedded == 1
    hits = await index.search("kittens purr", k=1)
    assert hits[0].path == "pets/dogs.md" and "Kittens" in hits[0].text
