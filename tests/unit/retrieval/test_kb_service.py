"""The knowledge-base service the facade and ``kairox kb list|add|search`` call."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairox.core.errors import InvalidInput, NotFound, RetrievalError
from kairox.core.kb_config import KnowledgeBaseConfig, parse_knowledge_bases
from kairox.retrieval.knowledge_bases.service import (
    add_documents,
    knowledge_base_bindings,
    list_knowledge_bases,
    search_knowledge_base,
)


@pytest.fixture
def configs(tmp_path: Path) -> dict[str, KnowledgeBaseConfig]:
    return parse_knowledge_bases(
        {
            "notes": {
                "kind": "sqlite_fts",
                "path": "notes.sqlite",
                "max_results": 2,
                "description": "team notes",
            },
            "index": {"kind": "tantivy", "path": "tantivy", "profile_aliases": ["smart"]},
            "cloud": {
                "kind": "pinecone",
                "host": "https://idx.example.invalid",
                "api_key_env": "KAIROX_SERVICE_TEST_KEY",
            },
            "off": {"kind": "sqlite_fts", "path": "off.sqlite", "enabled": False},
        },
        file=str(tmp_path / "kairox.toml"),
    )


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    paths = []
    for name, text in [("a.md", "alpha apples"), ("b.md", "beta apples"), ("c.md", "gamma apples")]:
        path = tmp_path / name
        path.write_text(text + "\n")
        paths.append(path)
    return paths


def test_list_shows_every_base_with_local_counts(
    configs: dict[str, KnowledgeBaseConfig], files: list[Path], tmp_path: Path
) -> None:
    add_documents("notes", configs, files[:2])

    infos = {info.id: info for info in list_knowledge_bases(configs)}

    assert [info.id for info in list_knowledge_bases(configs)] == ["cloud", "index", "notes", "off"]
    assert infos["notes"].documents == 2
    assert infos["notes"].location == str(tmp_path / "notes.sqlite")
    assert infos["notes"].description == "team notes"
    assert infos["index"].documents == 0
    assert infos["index"].profile_aliases == ("smart",)
    assert infos["cloud"].documents is None
    assert infos["cloud"].location == "https://idx.example.invalid (namespace __default__)"
    assert infos["off"].enabled is False
    assert not (tmp_path / "off.sqlite").exists()


def test_add_reports_and_is_idempotent(
    configs: dict[str, KnowledgeBaseConfig], files: list[Path]
) -> None:
    first = add_documents("index", configs, files)
    second = add_documents("index", configs, files)

    assert len(first.added) == 3 and first.documents == 3
    assert len(second.unchanged) == 3 and second.added == ()


def test_add_refuses_remote_kinds_unknown_ids_and_nothing(
    configs: dict[str, KnowledgeBaseConfig], files: list[Path]
) -> None:
    with pytest.raises(InvalidInput, match="pinecone knowledge base"):
        add_documents("cloud", configs, files)
    with pytest.raises(NotFound, match="no knowledge base with id 'nope'"):
        add_documents("nope", configs, files)
    with pytest.raises(InvalidInput, match="at least one file"):
        add_documents("notes", configs, [])


async def test_search_defaults_k_to_max_results(
    configs: dict[str, KnowledgeBaseConfig], files: list[Path]
) -> None:
    add_documents("notes", configs, files)

    default = await search_knowledge_base("notes", configs, "apples")
    wider = await search_knowledge_base("notes", configs, "apples", 3)

    assert len(default) == 2
    assert len(wider) == 3
    assert all(hit.source == "kb:notes" for hit in wider)


async def test_search_refuses_disabled_bases_and_bad_k(
    configs: dict[str, KnowledgeBaseConfig],
) -> None:
    with pytest.raises(InvalidInput, match="disabled"):
        await search_knowledge_base("off", configs, "apples")
    with pytest.raises(InvalidInput, match="k must be 1 or more"):
        await search_knowledge_base("notes", configs, "apples", 0)


async def test_remote_search_reads_the_secret_from_the_given_env(
    configs: dict[str, KnowledgeBaseConfig],
) -> None:
    with pytest.raises(RetrievalError, match="KAIROX_SERVICE_TEST_KEY is not set"):
        await search_knowledge_base("cloud", configs, "apples", env={})


def test_bindings_cover_enabled_bases_with_quota_and_aliases(
    configs: dict[str, KnowledgeBaseConfig],
) -> None:
    bindings = {b.retriever.name: b for b in knowledge_base_bindings(configs, env={})}

    assert sorted(bindings) == ["kb:cloud", "kb:index", "kb:notes"]
    assert bindings["kb:notes"].k == 2
    assert bindings["kb:index"].profile_aliases == ("smart",)
    assert bindings["kb:cloud"].profile_aliases == ()
