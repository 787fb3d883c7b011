"""The local kinds (``sqlite_fts``, ``tantivy``): loading, re-loading, skipping, and searching."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairox.core.errors import RetrievalError
from kairox.core.kb_config import SqliteFtsConfig, TantivyConfig
from kairox.retrieval.knowledge_bases import LocalKnowledgeBase, create_knowledge_base
from kairox.retrieval.knowledge_bases._documents import query_terms, split_passages

FTS_SYNTAX = [
    '"unbalanced quote',
    "sour*",
    "NEAR(starter flour)",
    "-yeast",
    "(bread",
    "AND OR NOT",
    "title:bread",
    "^2 + {} [] :",
    "'); DROP TABLE kb_documents; --",
]


@pytest.fixture(params=["sqlite_fts", "tantivy"])
def kb(request: pytest.FixtureRequest, tmp_path: Path) -> LocalKnowledgeBase:
    if request.param == "sqlite_fts":
        config: SqliteFtsConfig | TantivyConfig = SqliteFtsConfig(
            kind="sqlite_fts", path=tmp_path / "kb.sqlite"
        )
    else:
        config = TantivyConfig(kind="tantivy", path=tmp_path / "tantivy-index")
    built = create_knowledge_base("notes", config)
    assert isinstance(built, LocalKnowledgeBase)
    return built


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "bread.md").write_text(
        "# Sourdough bread\n\nFeed the starter flour and water.\n\nBake the loaf hot.\n"
    )
    (root / "tides.txt").write_text("The moon's gravity raises the ocean tides twice a day.\n")
    return root


def test_adding_documents_reports_and_counts(kb: LocalKnowledgeBase, docs: Path) -> None:
    assert kb.count() == 0

    report = kb.add_documents([docs / "bread.md", docs / "tides.txt"])

    assert report.source == "kb:notes"
    assert sorted(Path(p).name for p in report.added) == ["bread.md", "tides.txt"]
    assert report.passages == 2 and report.documents == 2
    assert kb.count() == 2


async def test_search_finds_the_document_with_its_title_path_and_lines(
    kb: LocalKnowledgeBase, docs: Path
) -> None:
    kb.add_documents([docs])

    hits = await kb.search("how often do ocean tides rise", k=5)

    assert hits[0].path == str((docs / "tides.txt").resolve())
    assert hits[0].title == "tides.txt"
    assert (hits[0].start_line, hits[0].end_line) == (1, 1)
    assert hits[0].source == "kb:notes"
    bread = await kb.search("sourdough", k=5)
    assert bread[0].title == "Sourdough bread"
    assert "starter flour" in bread[0].text


async def test_re_adding_the_same_file_is_idempotent(kb: LocalKnowledgeBase, docs: Path) -> None:
    kb.add_documents([docs / "bread.md"])

    again = kb.add_documents([docs / "bread.md"])

    assert again.unchanged == (str((docs / "bread.md").resolve()),)
    assert again.added == () and again.passages == 0
    assert len(await kb.search("sourdough", k=10)) == 1


async def test_re_adding_a_changed_file_replaces_it(kb: LocalKnowledgeBase, docs: Path) -> None:
    kb.add_documents([docs / "bread.md"])
    (docs / "bread.md").write_text("# Rye bread\n\nRye needs a longer proof.\n")

    report = kb.add_documents([docs / "bread.md"])

    assert report.replaced == (str((docs / "bread.md").resolve()),)
    assert kb.count() == 1
    assert await kb.search("sourdough starter", k=5) == []
    rye = await kb.search("rye proof", k=5)
    assert [h.title for h in rye] == ["Rye bread"]


def test_unusable_files_are_skipped_with_reasons(
    kb: LocalKnowledgeBase, docs: Path, tmp_path: Path
) -> None:
    (docs / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (docs / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (docs / "empty.md").write_text("\n\n  \n")
    (docs / ".hidden.md").write_text("secret notes")

    report = kb.add_documents([docs, tmp_path / "missing.md"])

    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert reasons == {
        "image.png": "binary file",
        "latin1.txt": "not UTF-8 text",
        "empty.md": "no text",
        "missing.md": "no such file",
    }
    assert sorted(Path(p).name for p in report.added) == ["bread.md", "tides.txt"]


async def test_long_documents_are_split_into_passages_with_line_ranges(
    kb: LocalKnowledgeBase, tmp_path: Path
) -> None:
    paragraphs = [f"Paragraph {i} talks about filler topic number {i}. " * 6 for i in range(40)]
    paragraphs[33] = "The zeppelin hangar in Friedrichshafen is enormous."
    path = tmp_path / "long.md"
    path.write_text("\n\n".join(paragraphs) + "\n")

    report = kb.add_documents([path])
    hits = await kb.search("zeppelin hangar", k=3)

    assert report.passages > 5
    assert "zeppelin" in hits[0].text
    assert hits[0].start_line is not None and hits[0].start_line > 1
    assert hits[0].end_line is not None and hits[0].end_line >= 67
    assert len(hits[0].text) <= 1300


@pytest.mark.parametrize("query", FTS_SYNTAX)
async def test_query_syntax_is_plain_text(kb: LocalKnowledgeBase, docs: Path, query: str) -> None:
    kb.add_documents([docs])

    hits = await kb.search(query, k=5)

    assert isinstance(hits, list)
    assert kb.count() == 2


async def test_syntax_words_still_match_as_words(kb: LocalKnowledgeBase, docs: Path) -> None:
    kb.add_documents([docs])

    hits = await kb.search('"starter" AND -flour*', k=5)

    assert hits and hits[0].title == "Sourdough bread"


async def test_empty_queries_and_k_zero_return_nothing(kb: LocalKnowledgeBase, docs: Path) -> None:
    kb.add_documents([docs])

    assert await kb.search("", k=5) == []
    assert await kb.search(" ?! ", k=5) == []
    assert await kb.search("tides", k=0) == []


async def test_searching_before_anything_was_added_says_how_to_load(
    kb: LocalKnowledgeBase,
) -> None:
    with pytest.raises(RetrievalError, match="kairox kb add notes"):
        await kb.search("anything", k=3)


def test_passages_keep_line_ranges() -> None:
    text = "title\n\nfirst para\nline two\n\n\nsecond para\n"

    passages = split_passages(text, max_chars=20)
    narrow = split_passages(text, max_chars=12)

    assert [(p.start_line, p.end_line) for p in passages] == [(1, 1), (3, 4), (7, 7)]
    assert passages[1].text == "first para\nline two"
    assert [(p.start_line, p.end_line) for p in narrow] == [(1, 1), (3, 3), (4, 4), (7, 7)]


def test_query_terms_drop_operators_and_repeat_words() -> None:
    assert query_terms('"Sour*" NEAR(sour, -dough) AND') == ["sour", "near", "dough", "and"]
