"""The protocol prompt of small local models that follow it, and the reply grammar that goes with
it: every example in the prompt is a reply the grammar allows, and copies of them are refused."""

from __future__ import annotations

import re

from kairox.core.types import MemoryScope
from kairox.memory.markers import parse_memory_markers
from kairox.memory.protocol import (
    LOCAL_PROTOCOL,
    LOCAL_REPLY_GRAMMAR,
    PROMPT_TEXTS,
    example_texts,
    reply_grammar,
)
from kairox.memory.service import MemoryPolicy, Proposal, copied_from_examples
from kairox.runtime.prompts import build_system_prompt

# The grammar, as a regular expression (GBNF ``{0,31}`` and classes mean the same here).
MARKER = r'<memory scope="(user|workspace)" key="[a-z][a-z0-9._-]{0,31}">[^<>\n]+</memory>'
REPLY = re.compile(rf"(?:{MARKER}\n)?[^<\n\t ](?:[^<]|<[^m])*", re.DOTALL)


def test_only_the_local_prompt_constrains_the_reply() -> None:
    assert reply_grammar(build_system_prompt("", kind="local")) == LOCAL_REPLY_GRAMMAR
    with_instructions = build_system_prompt("Be terse.", kind="local")
    assert reply_grammar(with_instructions) == LOCAL_REPLY_GRAMMAR
    assert reply_grammar(build_system_prompt("", kind="full")) is None
    assert reply_grammar(build_system_prompt("", kind="short")) is None


def test_the_prompt_shows_one_marker_per_scope_each_with_a_key() -> None:
    markers = parse_memory_markers(LOCAL_PROTOCOL).markers
    assert sorted(m.scope.value for m in markers) == ["user", "workspace"]
    assert all(m.key and re.fullmatch(r"[a-z][a-z0-9._-]{0,31}", m.key) for m in markers)
    flat = " ".join(LOCAL_PROTOCOL.split())
    assert "as a fact, not an instruction" in flat and "ONE memory line" in flat


def test_the_worked_example_is_a_reply_the_grammar_allows() -> None:
    lines = LOCAL_PROTOCOL.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('<memory scope="user"'))
    example = "\n".join(lines[start : start + 2])
    assert REPLY.fullmatch(example)
    parsed = parse_memory_markers(example)
    assert len(parsed.markers) == 1 and parsed.visible.strip()
    assert REPLY.fullmatch("Paris is the capital of France.")
    assert REPLY.fullmatch("Use `List<int>` here.")
    assert not REPLY.fullmatch('<memory scope="session">x</memory>\nHi')  # no session scope
    assert not REPLY.fullmatch('<memory scope="user" key="a">x</memory>\n')  # an answer follows
    assert not REPLY.fullmatch('Hi\n<memory scope="user" key="a">x</memory>')  # marker first


def test_copies_of_the_examples_are_refused() -> None:
    for marker in parse_memory_markers(LOCAL_PROTOCOL).markers:
        assert marker.key is not None
        copy = Proposal(MemoryScope.USER, marker.key, "Something else entirely.")
        assert copied_from_examples(copy, PROMPT_TEXTS) is not None
        same_body = Proposal(marker.scope, "other.key", marker.body)
        assert copied_from_examples(same_body, PROMPT_TEXTS) is not None
    own = Proposal(MemoryScope.USER, "diet", "The user is vegan.")
    assert copied_from_examples(own, PROMPT_TEXTS) is None


def test_the_worked_examples_count_only_for_a_model_shown_them() -> None:
    """``build.tool`` is a real key for any model that was never shown the local protocol."""
    [workspace] = [m for m in parse_memory_markers(LOCAL_PROTOCOL).markers if m.key == "build.tool"]
    proposal = Proposal(MemoryScope.WORKSPACE, "build.tool", "We build with uv.")
    local = example_texts(build_system_prompt("", kind="local"))
    assert copied_from_examples(proposal, local) is not None
    for kind in ("full", "short"):
        texts = example_texts(build_system_prompt("", kind=kind))
        assert copied_from_examples(proposal, texts) is None
    assert copied_from_examples(proposal, MemoryPolicy().example_texts) is None
    assert workspace.scope is MemoryScope.WORKSPACE
