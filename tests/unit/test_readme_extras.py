"""The README says which extra each command needs where the command is shown, and says precisely
which prompts are counted exactly (issue 37)."""

from __future__ import annotations

import re
from pathlib import Path

from test_readme_commands import commands_block
from test_readme_sections import section

from kairox.context.tokens import tokenizer_name_for_model
from kairox.context.trace_view import bar_chart
from kairox.core.events import ContextAssembled

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _extras_by_command() -> dict[str, str]:
    """``kairox serve`` -> ``web``, from the extras table's "adds" column."""
    rows = re.findall(r"^\| `([a-z-]+)` \| `(kairox [a-z]+)`", section("Install"), flags=re.M)
    return {command: extra for extra, command in rows}


def test_every_command_that_needs_an_extra_names_it_on_its_line() -> None:
    needs = _extras_by_command()
    assert needs == {"kairox chat": "tui", "kairox serve": "web", "kairox mcp": "mcp"}
    lines = commands_block()
    for command, extra in {**needs, "kairox migrate": "postgres"}.items():
        [line] = [ln for ln in lines if ln.startswith(command + " ")]
        assert f"extra: {extra}" in line, line


def test_the_postgres_quick_start_installs_its_extra() -> None:
    block = re.search(r"```sh\n(.*?)```", section("PostgreSQL"), flags=re.S)
    assert block is not None
    assert re.search(r'pip install "kairox\[[a-z,]*postgres[a-z,]*\]"', block.group(1))
    assert "extra\n`mcp`" in (ROOT / "docs" / "mcp.md").read_text()


def test_the_token_count_claim_names_the_estimate_the_trace_shows() -> None:
    why = " ".join(section("Why Kairox").split())
    assert "counted with the model's tokenizer and never" not in why  # the old blanket claim
    assert "exactly with the model's tokenizer for OpenAI's GPT models" in why
    assert "tokenizer estimate (estimated counts)" in why
    exact = {"openai:gpt-4o-mini": "o200k_base", "openai:gpt-4": "cl100k_base"}
    for model, name in exact.items():
        assert tokenizer_name_for_model(model) == name
    for model in ("local", "anthropic:claude-sonnet-4", "openai:llama3.2"):
        assert tokenizer_name_for_model(model) == "estimate", model
    trace = ContextAssembled.model_construct(
        turn=1, model="local", tokenizer="estimate", estimated=True, window=10, headroom=1,
        budget=9, used=0, by_source={}, items=(),
    )  # fmt: skip
    assert "tokenizer estimate (estimated counts)" in bar_chart(trace)
