"""Model windows: the table, config overrides, default headroom and clear config errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kairox.context.windows import (
    DEFAULT_CONTEXT_WINDOW,
    Budget,
    ModelName,
    ModelWindow,
    lookup_window,
    parse_model,
    resolve_window,
)
from kairox.core.errors import ConfigError, InvalidInput


@pytest.mark.parametrize(
    ("model", "window", "max_output"),
    [
        ("gpt-4o", 128_000, 16_384),
        ("openai:gpt-4o-mini", 128_000, 16_384),
        ("gpt-4o-2024-08-06", 128_000, 16_384),
        ("gpt-4o-2024-05-13", 128_000, 4_096),
        ("gpt-4.1", 1_047_576, 32_768),
        ("openai:gpt-4.1-mini", 1_047_576, 32_768),
        ("gpt-4-turbo-2024-04-09", 128_000, 4_096),
        ("gpt-4-1106-preview", 128_000, 4_096),
        ("gpt-4", 8_192, 4_096),
        ("gpt-4-0613", 8_192, 4_096),
        ("gpt-3.5-turbo", 16_385, 4_096),
        ("o3", 200_000, 100_000),
        ("o4-mini", 200_000, 100_000),
        ("o1-mini", 128_000, 65_536),
        ("gpt-5-nano", 400_000, 128_000),
        ("anthropic:claude-3-5-sonnet-20241022", 200_000, 8_192),
        ("claude-sonnet-4-20250514", 200_000, 64_000),
        ("claude-sonnet-4-5", 200_000, 64_000),
        ("anthropic:claude-opus-4-1-20250805", 200_000, 32_000),
        ("claude-3-haiku-20240307", 200_000, 4_096),
        ("local", 8_192, 1_024),
        ("local:/models/gpt-4o-lookalike.gguf", 8_192, 1_024),
        ("scripted:/tmp/gpt-4.1.jsonl", 8_192, 1_024),
    ],
)
def test_known_models_carry_their_limits(model: str, window: int, max_output: int) -> None:
    assert lookup_window(model) == ModelWindow(window, max_output)


@pytest.mark.parametrize("model", ["mystery-model", "openai:gpt-4omega", "o1x", "ollama:llama3"])
def test_unknown_models_have_no_entry(model: str) -> None:
    assert lookup_window(model) is None


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("openai:gpt-4o-mini", ModelName("openai", "gpt-4o-mini")),
        ("  Anthropic:Claude-Sonnet-4 ", ModelName("anthropic", "claude-sonnet-4")),
        ("gpt-4o", ModelName(None, "gpt-4o")),
        ("openrouter:openai/gpt-4o", ModelName("openrouter", "gpt-4o")),
        ("ft:gpt-4o-mini:acme::x1", ModelName(None, "gpt-4o-mini:acme::x1")),
        ("local", ModelName("local", "")),
        ("LOCAL", ModelName("local", "")),
        ("local:C:/models/x.gguf", ModelName("local", "")),
        ("scripted:/tmp/gpt-4o.jsonl", ModelName("scripted", "")),
    ],
)
def test_model_specs_parse(spec: str, parsed: ModelName) -> None:
    assert parse_model(spec) == parsed


def test_default_headroom_is_the_output_limit_capped_to_a_quarter() -> None:
    # gpt-4o: 16384 < 128000 / 4
    assert resolve_window("openai:gpt-4o") == Budget(128_000, 16_384, 111_616, "model")
    # gpt-4: 4096 > 8192 / 4, so the cap wins
    assert resolve_window("gpt-4") == Budget(8_192, 2_048, 6_144, "model")
    # claude-sonnet-4: 64000 > 200000 / 4
    assert resolve_window("anthropic:claude-sonnet-4") == Budget(200_000, 50_000, 150_000)
    assert resolve_window("local") == Budget(8_192, 1_024, 7_168, "model")


def test_config_overrides_window_and_headroom() -> None:
    budget = resolve_window("gpt-4o", context_window=32_000, headroom=2_000)
    assert budget == Budget(32_000, 2_000, 30_000, "config")
    # Only the window: headroom is still the model's output limit, capped to the new window.
    assert resolve_window("gpt-4o", context_window=20_000).headroom == 5_000
    assert resolve_window("gpt-4o", context_window=100_000).headroom == 16_384
    # Only the headroom: the window stays the model's.
    assert resolve_window("gpt-4o", headroom=1_000) == Budget(128_000, 1_000, 127_000, "model")


def test_unknown_model_gets_a_marked_conservative_default() -> None:
    budget = resolve_window("ollama:llama3")
    assert budget.window == DEFAULT_CONTEXT_WINDOW == 8_192
    assert budget.window_source == "default" and budget.window_estimated
    assert budget.headroom == 2_048  # the output limit is unknown: reserve the whole quarter
    assert budget.budget == 6_144
    configured = resolve_window("ollama:llama3", context_window=65_536)
    assert configured.window_source == "config" and not configured.window_estimated
    assert configured.headroom == 16_384
    assert not resolve_window("gpt-4o").window_estimated


@given(
    window=st.integers(2, 2_000_000),
    headroom=st.one_of(st.none(), st.integers(1, 2_000_000)),
    model=st.sampled_from(["gpt-4o", "gpt-4", "claude-opus-4", "local", "unknown-x"]),
)
def test_budget_is_window_minus_headroom(window: int, headroom: int | None, model: str) -> None:
    if headroom is not None and headroom >= window:
        with pytest.raises(ConfigError, match="headroom"):
            resolve_window(model, context_window=window, headroom=headroom)
        return
    budget = resolve_window(model, context_window=window, headroom=headroom)
    assert budget.budget == budget.window - budget.headroom > 0
    assert budget.window == window
    if headroom is None:
        assert 1 <= budget.headroom <= max(1, window // 4)


@pytest.mark.parametrize(
    ("kwargs", "key", "fix"),
    [
        ({"context_window": 0}, "profiles.fast.context_window", "positive"),
        ({"context_window": -5}, "profiles.fast.context_window", "positive"),
        ({"headroom": 0}, "profiles.fast.headroom", "positive"),
        ({"context_window": 4_000, "headroom": 4_000}, "profiles.fast.headroom", "below 4000"),
        ({"headroom": 200_000}, "profiles.fast.headroom", "below 128000"),
        ({"context_window": True}, "profiles.fast.context_window", "positive integer"),
        ({"context_window": 1}, "profiles.fast.context_window", "real context window"),
    ],
)
def test_invalid_config_names_the_key_and_the_fix(
    kwargs: dict[str, int], key: str, fix: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_window("gpt-4o", profile="fast", file="kairox.toml", **kwargs)
    error = caught.value
    assert error.key == key
    assert error.file == "kairox.toml"
    assert error.fix is not None and fix in error.fix
    assert str(error).startswith(f"config error: kairox.toml: key '{key}': ")


def test_without_a_profile_the_key_is_bare() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_window("gpt-4o", headroom=-1)
    assert caught.value.key == "headroom"


def test_budget_refuses_inconsistent_figures() -> None:
    with pytest.raises(InvalidInput, match="budget must equal window - headroom"):
        Budget(window=1_000, headroom=100, budget=901)
    with pytest.raises(InvalidInput):
        Budget(window=1_000, headroom=1_000, budget=0)
