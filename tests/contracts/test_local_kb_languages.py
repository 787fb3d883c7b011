"""The local knowledge bases (``sqlite_fts``, ``tantivy``) find Chinese, Japanese, Korean, mixed
Chinese-English, Hindi and Thai text by a question in the same language, and a knowledge base
indexed by an earlier word splitter is re-indexed when opened, with a progress line, losing
nothing."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from kairox.core.kb_config import SqliteFtsConfig, TantivyConfig
from kairox.retrieval.knowledge_bases import LocalKnowledgeBase, create_knowledge_base
from kairox.store.db import Database
from kairox.store.knowledge_base import MIGRATIONS

DOCS = {
    "deploy": ("部署流程", "部署流程：先运行全部测试，再把镜像推送到生产服务器。"),
    "database": ("数据库", "本项目使用PostgreSQL数据库，每天晚上自动备份。"),
    "nihongo": ("バックアップ", "データベースのバックアップは毎晩三時に実行されます。"),
    "hangul": ("회의", "우리 팀은 매주 금요일에 배포 회의를 합니다."),
    "english": ("Lunch", "The cafeteria serves lunch at noon."),
    "cat": ("बिल्ली", "मेरी बिल्ली रोज़ सर्वर के ऊपर सोती है।"),
    "bat": ("क्रिकेट", "क्रिकेट का बल्ला लकड़ी का बना है।"),
    "thai": ("อาหาร", "ฉันชอบอาหารไทยมาก โดยเฉพาะต้มยำกุ้ง"),
}
QUESTIONS = [
    ("数据库多久备份一次？", "database"),
    ("怎么部署到生产服务器", "deploy"),
    ("PostgreSQL数据库", "database"),
    ("バックアップは何時ですか", "nihongo"),
    ("배포 회의는 언제", "hangul"),
    ("when is lunch served", "english"),
    ("बिल्ली सर्वर", "cat"),  # not the bat: the same letters without their signs
    ("बल्ला", "bat"),
    ("ต้มยำ", "thai"),  # a word inside a Thai sentence
]


def _config(kind: str, tmp_path: Path) -> SqliteFtsConfig | TantivyConfig:
    if kind == "sqlite_fts":
        return SqliteFtsConfig(kind="sqlite_fts", path=tmp_path / "kb.sqlite")
    return TantivyConfig(kind="tantivy", path=tmp_path / "index")


def _files(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    paths = []
    for name, (title, text) in DOCS.items():
        path = folder / f"{name}.md"
        path.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        paths.append(path)
    return paths


@pytest.mark.parametrize("kind", ["sqlite_fts", "tantivy"])
@pytest.mark.parametrize(("question", "expected"), QUESTIONS)
async def test_a_question_finds_its_document_in_its_language(
    kind: str, question: str, expected: str, tmp_path: Path
) -> None:
    kb = create_knowledge_base(kind, _config(kind, tmp_path))
    assert isinstance(kb, LocalKnowledgeBase)
    kb.add_documents(_files(tmp_path))
    hits = await kb.search(question, k=3)
    assert hits and hits[0].path is not None and Path(hits[0].path).stem == expected
    assert 0.0 < hits[0].score <= 1.0
    if expected in ("cat", "bat"):  # the other one holds none of the question's words
        assert len({Path(h.path or "").stem for h in hits} & {"cat", "bat"}) == 1


async def test_an_sqlite_fts_file_of_raw_text_is_reindexed_on_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file written before: FTS5 over the raw text (a Chinese clause one token)."""
    path = tmp_path / "kb.sqlite"
    db = Database.open(path, MIGRATIONS[:2])
    with db.atomic() as conn:
        for doc_id, (name, (title, text)) in enumerate(DOCS.items(), start=1):
            conn.execute(
                "INSERT INTO kb_documents(doc_id, path, title, content_hash) VALUES (?, ?, ?, ?)",
                (doc_id, f"{name}.md", title, f"hash{doc_id}"),
            )
            conn.execute(
                "INSERT INTO kb_passages(passage_id, doc_id, ordinal, start_line, end_line, text) "
                "VALUES (?, ?, 0, 1, 3, ?)",
                (doc_id, doc_id, text),
            )
            conn.execute(
                "INSERT INTO kb_fts(rowid, title, text) VALUES (?, ?, ?)", (doc_id, title, text)
            )
    db.close()
    kb = create_knowledge_base("sqlite_fts", _config("sqlite_fts", tmp_path))
    assert isinstance(kb, LocalKnowledgeBase)
    with caplog.at_level(logging.WARNING):
        assert kb.count() == len(DOCS)
        hits = await kb.search("数据库多久备份一次？", k=3)
    assert hits and hits[0].path == "database.md"
    assert any(
        "re-indexing" in r.getMessage() and f"{len(DOCS)}/{len(DOCS)}" in r.getMessage()
        for r in caplog.records
    )
    english = await kb.search("lunch", k=3)
    assert english and english[0].path == "english.md"


async def test_a_tantivy_index_without_terms_fields_is_rebuilt_on_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tantivy = pytest.importorskip("tantivy")
    path = tmp_path / "index"
    path.mkdir()
    builder = tantivy.SchemaBuilder()  # the schema before the terms fields
    for field in ("title", "text"):
        builder.add_text_field(field, stored=True, tokenizer_name="en_stem")
    for field in ("path", "content_hash"):
        builder.add_text_field(field, stored=True, tokenizer_name="raw")
    builder.add_integer_field("ordinal", stored=True, indexed=True)
    builder.add_integer_field("start_line", stored=True)
    builder.add_integer_field("end_line", stored=True)
    old = tantivy.Index(builder.build(), path=str(path))
    writer = old.writer(15_000_000, 1)
    for name, (title, text) in DOCS.items():
        doc = tantivy.Document()
        for field, value in (("title", title), ("text", text), ("path", f"{name}.md")):
            doc.add_text(field, value)
        doc.add_text("content_hash", f"hash-{name}")
        for field, number in (("ordinal", 0), ("start_line", 1), ("end_line", 3)):
            doc.add_integer(field, number)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    del old, writer

    kb = create_knowledge_base("tantivy", _config("tantivy", tmp_path))
    assert isinstance(kb, LocalKnowledgeBase)
    with caplog.at_level(logging.WARNING):
        assert kb.count() == len(DOCS)
    assert any("re-indexing" in r.getMessage() for r in caplog.records)
    hits = await kb.search("数据库多久备份一次？", k=3)
    assert hits and hits[0].path == "database.md" and hits[0].start_line == 1
    again = create_knowledge_base("tantivy", _config("tantivy", tmp_path))
    assert isinstance(again, LocalKnowledgeBase) and again.count() == len(DOCS)


async def test_a_tantivy_index_of_an_earlier_splitter_is_rebuilt_on_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An index with the terms fields but no ``kairox-terms-version`` holds version 2's terms
    (a Hindi word cut at its marks); it is rebuilt once, from its stored passages."""
    kb = create_knowledge_base("tantivy", _config("tantivy", tmp_path))
    assert isinstance(kb, LocalKnowledgeBase)
    kb.add_documents(_files(tmp_path))
    marker = tmp_path / "index" / "kairox-terms-version"
    assert marker.read_text().strip() == "3"
    marker.unlink()
    with caplog.at_level(logging.WARNING):
        reopened = create_knowledge_base("tantivy", _config("tantivy", tmp_path))
        assert isinstance(reopened, LocalKnowledgeBase) and reopened.count() == len(DOCS)
    assert any("re-indexing" in r.getMessage() for r in caplog.records)
    assert marker.read_text().strip() == "3"
    hits = await reopened.search("बल्ला", k=3)
    assert hits and hits[0].path is not None and Path(hits[0].path).stem == "bat"
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        third = create_knowledge_base("tantivy", _config("tantivy", tmp_path))
        assert isinstance(third, LocalKnowledgeBase) and third.count() == len(DOCS)
    assert not any("re-indexing" in r.getMessage() for r in caplog.records)
