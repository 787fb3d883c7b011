"""The provider registry: spec parsing, settings validation and which backend each spec builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from kairox.core.errors import ConfigError, MissingExtra
from kairox.core.messages import ChatMessage
from kairox.models import (
    ModelProvider,
    ModelRequest,
    ParsedSpec,
    ProviderSettings,
    ToolSpec,
    create_provider,
    parse_spec,
    spec_forms,
)

SPEC_FORMS = (
    "openai:<model>, anthropic:<model>, local, local:<path-to-gguf>, scripted:<path-to-jsonl>"
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:gpt-4o-mini", ParsedSpec("openai", "gpt-4o-mini")),
        ("anthropic:claude-3-5-haiku-latest", ParsedSpec("anthropic", "claude-3-5-haiku-latest")),
        ("local", ParsedSpec("local", None)),
        ("local:/models/x.gguf", ParsedSpec("local", "/models/x.gguf")),
        ("scripted:tests/a.jsonl", ParsedSpec("scripted", "tests/a.jsonl")),
        ("openai:org/model:v2", ParsedSpec("openai", "org/model:v2")),
        ("  local  ", ParsedSpec("local", None)),
    ],
)
def test_parse_spec_accepts_the_documented_forms(spec: str, expected: ParsedSpec) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize("spec", ["gpt-4o", "ollama:llama3", "", "openai", "OPENAI:gpt-4o"])
def test_unknown_spec_names_the_accepted_forms(spec: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_spec(spec)
    assert SPEC_FORMS in str(err.value)
    assert f"'{spec}'" in str(err.value)


@pytest.mark.parametrize("spec", ["openai:", "anthropic: ", "scripted:", "local:"])
def test_spec_without_argument_is_rejected(spec: str) -> None:
    with pytest.raises(ConfigError, match="has no"):
        parse_spec(spec)


def test_create_provider_builds_each_remote_backend_without_network() -> None:
    settings = ProviderSettings(base_url="http://127.0.0.1:9/v1", api_key_env="KX_TEST_KEY")
    openai_provider = create_provider("openai:gpt-4o-mini", settings=settings)
    anthropic_provider = create_provider("anthropic:claude-x", settings=settings)
    assert isinstance(openai_provider, ModelProvider)
    assert (openai_provider.spec, openai_provider.model_name) == (
        "openai:gpt-4o-mini",
        "gpt-4o-mini",
    )
    assert (anthropic_provider.spec, anthropic_provider.model_name) == (
        "anthropic:claude-x",
        "claude-x",
    )


def test_create_provider_scripted_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"text": "hi"}) + "\n", encoding="utf-8")
    provider = create_provider(f"scripted:{path}")
    assert provider.spec == f"scripted:{path}"
    with pytest.raises(ConfigError, match="cannot read"):
        create_provider(f"scripted:{tmp_path / 'missing.jsonl'}")


def test_create_provider_local_with_missing_file_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="GGUF model file not found"):
        create_provider(f"local:{tmp_path / 'none.gguf'}")


def test_local_uses_settings_model_path_when_spec_has_none(tmp_path: Path) -> None:
    settings = ProviderSettings(model_path=str(tmp_path / "other.gguf"))
    with pytest.raises(ConfigError, match=r"other\.gguf"):
        create_provider("local", settings=settings)


def test_settings_are_frozen_and_validated() -> None:
    settings = ProviderSettings()
    assert (settings.timeout_s, settings.max_retries, settings.base_url) == (60.0, 0, None)
    with pytest.raises(ValidationError):
        ProviderSettings(timeout_s=0)
    with pytest.raises(ValidationError):
        ProviderSettings(max_retries=-1)
    with pytest.raises(ValidationError):
        ProviderSettings(unknown="x")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        settings.base_url = "http://x"  # type: ignore[misc]


def test_model_request_validates_indexes() -> None:
    msgs = (ChatMessage(role="user", content="x"),)
    with pytest.raises(ValueError, match="call_index"):
        ModelRequest(messages=msgs, session_id="s", call_index=-1)
    with pytest.raises(ValueError, match="max_tokens"):
        ModelRequest(messages=msgs, session_id="s", call_index=0, max_tokens=0)


def test_tool_spec_parameters_are_deep_frozen() -> None:
    schema: dict[str, object] = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    spec = ToolSpec("read_file", "Read a file", schema)
    schema["required"] = []  # the caller's dict does not leak into the spec
    assert spec.parameters_dict()["required"] == ["path"]
    with pytest.raises(TypeError):
        spec.parameters["type"] = "array"  # type: ignore[index]
    fresh = spec.parameters_dict()
    fresh["type"] = "array"
    assert spec.parameters_dict()["type"] == "object"
    same = ToolSpec("read_file", "Read a file", spec.parameters_dict())
    assert spec == same
    assert hash(spec) == hash(same)


def test_missing_llama_cpp_names_the_local_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "llama_cpp" else real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(MissingExtra) as err:
        create_provider("local")
    assert err.value.extra == "local"
    assert "pip install 'kairox[local]'" in str(err.value)


def test_the_accepted_forms_come_from_the_one_registry() -> None:
    assert spec_forms() == SPEC_FORMS
