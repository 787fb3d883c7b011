"""Embedders and knowledge-base kinds register like model backends: ``register(prefix,
factory)`` / ``register(kind, factory)`` from outside the package, then configs name them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from helpers import invoke, write_config
from kairox.core.errors import ConfigError
from kairox.core.kb_config import KnowledgeBaseSettings, unregister_kind
from kairox.retrieval import embeddings, knowledge_bases
from kairox.retrieval.embeddings import EmbedderSettings, create_embedder
from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.knowledge_bases import KnowledgeBase
from kairox.retrieval.types import RetrievalHit


@pytest.fixture
def toy_embedder() -> Iterator[list[tuple[str, EmbedderSettings]]]:
    calls: list[tuple[str, EmbedderSettings]] = []

    def make(name: str, settings: EmbedderSettings) -> HashingEmbedder:
        calls.append((name, settings))
        return HashingEmbedder(16)

    embeddings.register("toy", make)
    yield calls
    embeddings.unregister("toy")


def test_create_embedder_returns_what_a_registered_factory_made(
    toy_embedder: list[tuple[str, EmbedderSettings]],
) -> None:
    made = create_embedder("toy:mini", base_url="http://127.0.0.1:9/v1")
    assert isinstance(made, HashingEmbedder) and made.dimensions == 16
    assert toy_embedder == [("mini", EmbedderSettings(base_url="http://127.0.0.1:9/v1"))]
    with pytest.raises(ConfigError, match="names no model"):
        create_embedder("toy")  # not registered as bare


def test_an_embedder_prefix_is_taken_once(toy_embedder: object) -> None:
    with pytest.raises(ValueError, match="already registered"):
        embeddings.register("toy", lambda name, settings: HashingEmbedder(8))
    with pytest.raises(ConfigError, match="unknown embedder 'nothing:x'") as refused:
        create_embedder("nothing:x")
    assert "'toy:<model>'" in (refused.value.fix or "")  # the accepted forms list it


class NotesApiSettings(KnowledgeBaseSettings):
    endpoint: str


class NotesApi:
    def __init__(self, kb_id: str, config: NotesApiSettings) -> None:
        self.name = f"kb:{kb_id}"
        self.config = config

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        return []


@pytest.fixture
def notes_api() -> Iterator[None]:
    def make(kb_id: str, config: KnowledgeBaseSettings, env: Mapping[str, str]) -> KnowledgeBase:
        assert isinstance(config, NotesApiSettings)
        return NotesApi(kb_id, config)

    knowledge_bases.register("notes-api", make, config=NotesApiSettings)
    yield
    unregister_kind("notes-api")


def test_a_registered_kind_is_accepted_by_kb_list(notes_api: None, workspace: Path) -> None:
    write_config(
        workspace,
        '[knowledge_bases.team]\nkind = "notes-api"\nendpoint = "https://notes.invalid"\n',
    )
    code, out = invoke("kb", "list", "--workspace", str(workspace), "--json")
    assert (code, json.loads(out)) == (0, [])  # a repo may not add a kind that may be remote
    assert invoke("trust", str(workspace))[0] == 0
    code, out = invoke("kb", "list", "--workspace", str(workspace), "--json")
    assert code == 0, out
    (entry,) = json.loads(out)
    assert (entry["id"], entry["kind"]) == ("team", "notes-api")


def test_a_registered_kind_validates_its_own_settings(notes_api: None, workspace: Path) -> None:
    write_config(
        workspace, '[knowledge_bases.team]\nkind = "notes-api"\nendpoint = "x"\nmax_result = 3\n'
    )
    assert invoke("trust", str(workspace))[0] == 0
    with pytest.raises(ConfigError, match="'max_result' is not a setting of kind 'notes-api'"):
        invoke("kb", "list", "--workspace", str(workspace))


def test_an_unregistered_kind_is_refused_with_the_kinds_there_are(workspace: Path) -> None:
    write_config(workspace, '[knowledge_bases.team]\nkind = "notes-api"\n')
    assert invoke("trust", str(workspace))[0] == 0
    with pytest.raises(ConfigError, match="the knowledge-base kind 'notes-api' is unknown") as no:
        invoke("kb", "list", "--workspace", str(workspace))
    assert '"sqlite_fts"' in (no.value.fix or "")
