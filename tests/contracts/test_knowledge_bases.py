"""The ``KnowledgeBase`` contract, run over every kind.

``sqlite_fts`` and ``tantivy`` are loaded from files; ``pinecone`` and ``bedrock`` run through
their SDKs against loopback fakes of their documented APIs, and ``weaviate`` with its gRPC
client replaced by a stand-in answering in the SDK's own types (tests/integration/kb/kbfakes),
all seeded with the same documents.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_FAKES = str(Path(__file__).resolve().parents[1] / "integration" / "kb")
if _FAKES not in sys.path:
    sys.path.insert(0, _FAKES)

from kbfakes import (  # noqa: E402
    DOCUMENTS,
    RELEVANT_QUERY,
    RELEVANT_WORD,
    FakeBedrock,
    FakePinecone,
    FakeServer,
)
from kbfakes.weaviate import StandInWeaviate, weaviate_config  # noqa: E402
from kbfakes.wiring import bedrock_setup, pinecone_setup  # noqa: E402

from kairox.core.kb_config import KB_KINDS, SqliteFtsConfig, TantivyConfig  # noqa: E402
from kairox.retrieval.knowledge_bases import (  # noqa: E402
    KnowledgeBase,
    LocalKnowledgeBase,
    create_knowledge_base,
)
from kairox.retrieval.types import RetrievalHit, WorkspaceRetriever  # noqa: E402

FTS_SYNTAX = ['"solar', "pan*", "NEAR(solar panels)", "-sunlight", "(a OR b", "x AND NOT y:z"]


def _local(kind: str, tmp_path: Path) -> KnowledgeBase:
    if kind == "sqlite_fts":
        config: SqliteFtsConfig | TantivyConfig = SqliteFtsConfig(
            kind="sqlite_fts", path=tmp_path / "kb.sqlite"
        )
    else:
        config = TantivyConfig(kind="tantivy", path=tmp_path / "index")
    kb = create_knowledge_base(kind, config)
    assert isinstance(kb, LocalKnowledgeBase)
    files = []
    for doc in DOCUMENTS:
        path = tmp_path / "docs" / f"{doc.id}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# {doc.title}\n\n{doc.text}\n")
        files.append(path)
    assert len(kb.add_documents(files).added) == len(DOCUMENTS)
    return kb


@pytest.fixture(params=KB_KINDS)
def knowledge_base(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeBase]:
    kind: str = request.param
    if kind in ("sqlite_fts", "tantivy"):
        yield _local(kind, tmp_path)
        return
    if kind == "weaviate":
        yield StandInWeaviate(kind, weaviate_config(), env={"KAIROX_TEST_WEAVIATE_KEY": "key"})
        return
    server: FakeServer
    if kind == "pinecone":
        server = FakePinecone().start()
        config, env = pinecone_setup(server)
        yield create_knowledge_base(kind, config, env=env)
    else:
        server = FakeBedrock(session_token="contract-token").start()
        b_config, env = bedrock_setup(server)
        yield create_knowledge_base(kind, b_config, env=env)
    server.stop()
    assert server.rejections == []


def _check_hits(kb: KnowledgeBase, hits: list[RetrievalHit]) -> None:
    for hit in hits:
        assert hit.source == kb.name
        assert isinstance(hit.text, str) and hit.text.strip()
        assert isinstance(hit.score, float)
        assert hit.chunk_id
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_it_is_a_workspace_retriever_named_after_its_id(knowledge_base: KnowledgeBase) -> None:
    retriever: WorkspaceRetriever = knowledge_base
    assert retriever.name.startswith("kb:")
    assert retriever.name.removeprefix("kb:") in KB_KINDS  # the fixtures use the kind as id


async def test_the_relevant_document_ranks_first(knowledge_base: KnowledgeBase) -> None:
    hits = await knowledge_base.search(RELEVANT_QUERY, k=3)

    assert hits
    _check_hits(knowledge_base, hits)
    assert RELEVANT_WORD in hits[0].text


@pytest.mark.parametrize("k", [1, 2, 4])
async def test_k_is_respected(knowledge_base: KnowledgeBase, k: int) -> None:
    hits = await knowledge_base.search("the moon sun ocean lava yeast pawn sunlight", k=k)

    assert 1 <= len(hits) <= k
    _check_hits(knowledge_base, hits)


@pytest.mark.parametrize("query", FTS_SYNTAX)
async def test_query_syntax_never_raises(knowledge_base: KnowledgeBase, query: str) -> None:
    hits = await knowledge_base.search(query, k=3)

    _check_hits(knowledge_base, hits)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
async def test_an_empty_query_returns_nothing(knowledge_base: KnowledgeBase, query: str) -> None:
    assert await knowledge_base.search(query, k=3) == []


async def test_unicode_queries_work(knowledge_base: KnowledgeBase) -> None:
    hits = await knowledge_base.search("Gezeiten 月 tides «moon»", k=2)

    _check_hits(knowledge_base, hits)
    assert hits and "moon" in hits[0].text
