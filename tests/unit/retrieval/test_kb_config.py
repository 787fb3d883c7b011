"""``[knowledge_bases.<id>]``: the union on ``kind``, paths, secrets and error messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from kairox.core.errors import ConfigError
from kairox.core.kb_config import (
    KB_KINDS,
    BedrockConfig,
    PineconeConfig,
    SqliteFtsConfig,
    TantivyConfig,
    WeaviateConfig,
    parse_knowledge_bases,
)

FILE = "/etc/kairox/kairox.toml"


def _one(entry: dict[str, object], *, base_dir: Path | None = None) -> object:
    return parse_knowledge_bases({"docs": entry}, file=FILE, base_dir=base_dir)["docs"]


def test_every_kind_parses_to_its_model(tmp_path: Path) -> None:
    parsed = parse_knowledge_bases(
        {
            "a": {"kind": "sqlite_fts", "path": "kb/a.sqlite"},
            "b": {"kind": "tantivy", "path": "/abs/index"},
            "c": {"kind": "pinecone", "host": "https://idx-123.svc.pinecone.io/"},
            "d": {"kind": "weaviate", "url": "http://localhost:8080", "collection": "Doc"},
            "e": {"kind": "bedrock", "knowledge_base_id": "ABCDEFGHIJ", "region": "eu-west-1"},
        },
        file=FILE,
        base_dir=tmp_path,
    )

    assert isinstance(parsed["a"], SqliteFtsConfig)
    assert parsed["a"].path == tmp_path / "kb/a.sqlite"
    assert isinstance(parsed["b"], TantivyConfig) and parsed["b"].path == Path("/abs/index")
    assert isinstance(parsed["c"], PineconeConfig)
    assert parsed["c"].host == "https://idx-123.svc.pinecone.io"
    assert parsed["c"].api_key_env == "PINECONE_API_KEY"
    assert parsed["c"].namespace == "__default__"
    assert isinstance(parsed["d"], WeaviateConfig) and parsed["d"].query == "hybrid"
    assert parsed["d"].api_key_env is None
    assert isinstance(parsed["e"], BedrockConfig)
    assert parsed["e"].secret_access_key_env == "AWS_SECRET_ACCESS_KEY"
    assert {c.kind for c in parsed.values()} == set(KB_KINDS)


def test_common_fields_have_documented_defaults() -> None:
    config = _one({"kind": "sqlite_fts", "path": "x.sqlite"})

    assert isinstance(config, SqliteFtsConfig)
    assert (config.profile_aliases, config.max_results, config.enabled, config.description) == (
        (),
        5,
        True,
        "",
    )


def test_relative_paths_resolve_against_the_config_files_directory() -> None:
    config = _one({"kind": "tantivy", "path": "indexes/docs"})

    assert isinstance(config, TantivyConfig)
    assert config.path == Path("/etc/kairox/indexes/docs")


def test_home_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    config = _one({"kind": "sqlite_fts", "path": "~/kb.sqlite"})

    assert isinstance(config, SqliteFtsConfig) and config.path == tmp_path / "kb.sqlite"


def test_models_are_frozen() -> None:
    config = _one({"kind": "sqlite_fts", "path": "x.sqlite"})

    with pytest.raises(ValidationError):
        config.max_results = 9  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", ["nope", "SQLITE_FTS", "faiss"])
def test_an_unknown_kind_names_the_key_and_lists_the_kinds(kind: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _one({"kind": kind, "path": "x"})

    error = caught.value
    assert error.file == FILE
    assert error.key == "knowledge_bases.docs.kind"
    assert error.fix is not None
    assert all(f'"{k}"' in error.fix for k in KB_KINDS)
    assert f"'{kind}' is unknown" in str(error)


def test_a_missing_kind_is_reported_on_the_kind_key() -> None:
    with pytest.raises(ConfigError, match="kind is missing") as caught:
        _one({"path": "x"})
    assert caught.value.key == "knowledge_bases.docs.kind"


def test_a_missing_required_field_names_it() -> None:
    with pytest.raises(ConfigError) as caught:
        _one({"kind": "weaviate", "url": "http://localhost:8080"})
    assert caught.value.key == "knowledge_bases.docs.collection"
    assert "'collection' is required for kind 'weaviate'" in str(caught.value)


def test_an_unknown_setting_is_refused_with_the_accepted_keys() -> None:
    with pytest.raises(ConfigError) as caught:
        _one({"kind": "sqlite_fts", "path": "x", "colour": "blue"})
    assert caught.value.key == "knowledge_bases.docs.colour"
    assert caught.value.fix is not None and "path" in caught.value.fix


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"kind": "pinecone", "host": "https://h", "api_key": "pcsk_live_123"}, "api_key"),
        (
            {"kind": "weaviate", "url": "http://h", "collection": "C", "apikey": "wv-secret-9"},
            "apikey",
        ),
        (
            {
                "kind": "bedrock",
                "knowledge_base_id": "A",
                "region": "us-east-1",
                "aws_secret_access_key": "wJalr",
            },
            "aws_secret_access_key",
        ),
        (
            {
                "kind": "bedrock",
                "knowledge_base_id": "A",
                "region": "us-east-1",
                "session_token": "FQoG",
            },
            "session_token",
        ),
    ],
)
def test_inline_secrets_are_refused_without_echoing_them(
    entry: dict[str, object], key: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _one(entry)

    error = caught.value
    assert error.key == f"knowledge_bases.docs.{key}"
    assert "never stored in config files" in str(error)
    assert "_env" in (error.fix or "")
    assert str(entry[key]) not in str(error)


@pytest.mark.parametrize("value", ["pcsk-abc-123", "my key", "AKIAABCDEFGHIJKLMNOP", "lower_case"])
def test_an_env_field_must_hold_a_variable_name(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _one({"kind": "pinecone", "host": "https://h", "api_key_env": value})

    assert caught.value.key == "knowledge_bases.docs.api_key_env"
    assert "NAME of the environment variable" in (caught.value.fix or "")
    assert value not in str(caught.value)


def test_a_literal_choice_lists_the_choices() -> None:
    with pytest.raises(ConfigError) as caught:
        _one({"kind": "weaviate", "url": "http://h", "collection": "C", "query": "vector"})
    assert caught.value.key == "knowledge_bases.docs.query"
    assert "'near_text'" in str(caught.value)


def test_bounds_are_explained() -> None:
    with pytest.raises(ConfigError) as caught:
        _one({"kind": "sqlite_fts", "path": "x", "max_results": 0})
    assert caught.value.key == "knowledge_bases.docs.max_results"
    assert caught.value.fix == "set max_results to at least 1"


@pytest.mark.parametrize(
    "entry",
    [
        {"kind": "pinecone", "host": "idx.pinecone.io"},
        {"kind": "weaviate", "url": "http://h", "collection": "Bad Name"},
        {"kind": "weaviate", "url": "http://h", "collection": "C", "text_property": "a{b}"},
        {"kind": "bedrock", "knowledge_base_id": "has-dash", "region": "us-east-1"},
        {"kind": "bedrock", "knowledge_base_id": "ABC", "region": "mars"},
    ],
)
def test_values_that_would_break_requests_are_refused(entry: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        _one(entry)


def test_a_non_table_entry_and_a_bad_id_are_refused() -> None:
    with pytest.raises(ConfigError, match="expected a table"):
        parse_knowledge_bases({"docs": "sqlite_fts"}, file=FILE)
    with pytest.raises(ConfigError, match="not a valid knowledge-base id"):
        parse_knowledge_bases({"bad id!": {"kind": "sqlite_fts", "path": "x"}}, file=FILE)


def test_profile_aliases_become_a_tuple() -> None:
    config = _one({"kind": "sqlite_fts", "path": "x", "profile_aliases": ["fast", "smart"]})
    assert config.profile_aliases == ("fast", "smart")  # type: ignore[union-attr]
