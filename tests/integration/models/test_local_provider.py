"""The local provider in-process on the bundled SmolLM2 GGUF: streaming, usage, cancel, failures."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

from kairox.core.errors import ConfigError
from kairox.core.messages import ChatMessage
from kairox.core.repetition import trim_repetition
from kairox.memory.extraction import EXTRACTION_GRAMMAR, extraction_messages, parse_extraction
from kairox.memory.markers import parse_memory_markers
from kairox.memory.protocol import reply_grammar
from kairox.models import (
    ModelRequest,
    ProviderSettings,
    ReplyCut,
    StreamFailed,
    StreamItem,
    TextDelta,
    UsageReported,
    collect,
    create_provider,
)
from kairox.models.local import LocalProvider
from kairox.runtime.prompts import build_system_prompt

pytestmark = pytest.mark.slow

# The grammars as regular expressions (GBNF ``{0,31}`` and classes mean the same here): a marker
# as both write it, ``EXTRACTION_GRAMMAR`` and ``LOCAL_REPLY_GRAMMAR``.
_MARKER = r'<memory scope="(user|workspace)" key="[a-z][a-z0-9._-]{0,31}">[^<>\n]+</memory>'
EXTRACTION_ANSWER = re.compile(rf"none|{_MARKER}(?:\n{_MARKER}){{0,2}}")
LOCAL_REPLY = re.compile(rf"(?:{_MARKER}\n)?[^<\n\t ](?:[^<]|<[^m])*", re.DOTALL)


def ask(text: str, *, max_tokens: int = 16) -> ModelRequest:
    return ModelRequest(
        messages=(ChatMessage(role="user", content=text),),
        session_id="s1",
        call_index=0,
        max_tokens=max_tokens,
        temperature=0.0,
    )


async def wait_until_idle(provider: LocalProvider, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while provider.busy:
        assert time.monotonic() < deadline, "the generation thread did not stop"
        await asyncio.sleep(0.05)  # poll interval


async def test_default_spec_uses_the_bundled_gguf(gguf: Path) -> None:
    provider = create_provider("local", settings=ProviderSettings(n_ctx=1024))
    assert isinstance(provider, LocalProvider)
    assert (provider.spec, provider.model_name) == ("local", "local")
    assert provider.model_path == gguf
    explicit = create_provider(f"local:{gguf}")
    assert explicit.spec == f"local:{gguf}"
    await provider.aclose()
    await explicit.aclose()


async def test_streams_text_deltas_and_usage(gguf: Path) -> None:
    provider = LocalProvider(model_path=gguf, n_ctx=1024)
    try:
        items = await asyncio.wait_for(
            collect_items(provider, ask("Say hello to the world.")), timeout=120
        )
        again = await asyncio.wait_for(collect(provider.stream(ask("Name a colour."))), 120)
    finally:
        await provider.aclose()
    deltas = [item for item in items if isinstance(item, TextDelta)]
    assert len(deltas) > 1
    assert "".join(d.text for d in deltas).strip()
    last = items[-1]
    assert isinstance(last, UsageReported)
    assert 0 < last.usage.completion_tokens <= 17
    assert last.usage.prompt_tokens > 5
    assert again.ok
    assert again.text.strip()


async def collect_items(provider: LocalProvider, request: ModelRequest) -> list[StreamItem]:
    return [item async for item in provider.stream(request)]


async def test_cancel_stops_the_worker_and_the_model_stays_usable(gguf: Path) -> None:
    provider = LocalProvider(model_path=gguf, n_ctx=1024)
    story = "Write a long story about a lighthouse keeper. Make it ten paragraphs."
    first: list[StreamItem] = []
    got_delta = asyncio.Event()

    async def consume() -> None:
        async for item in provider.stream(ask(story, max_tokens=400)):
            first.append(item)
            got_delta.set()

    try:
        task = asyncio.create_task(consume())
        await asyncio.wait_for(got_delta.wait(), timeout=120)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_until_idle(provider)
        assert isinstance(first[0], TextDelta)
        assert not any(isinstance(item, UsageReported) for item in first)
        reply = await asyncio.wait_for(collect(provider.stream(ask("Say hi."))), timeout=120)
    finally:
        await provider.aclose()
    assert reply.ok
    assert reply.usage is not None


async def test_abandoned_stream_stops_the_worker(gguf: Path) -> None:
    provider = LocalProvider(model_path=gguf, n_ctx=1024)
    stream = provider.stream(ask("Write a very long poem about rivers.", max_tokens=400))
    try:
        item = await asyncio.wait_for(anext(stream), timeout=120)
        assert isinstance(item, TextDelta)
        await stream.aclose()
        await wait_until_idle(provider)
    finally:
        await provider.aclose()


async def test_unloadable_file_is_a_stream_failure(tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a gguf file")
    provider = LocalProvider(model_path=bogus)
    items = await collect_items(provider, ask("hi"))
    await provider.aclose()
    assert len(items) == 1
    assert isinstance(items[0], StreamFailed)
    assert items[0].kind == "other"
    assert items[0].reason.startswith(f"cannot load the local model {bogus}")
    assert "\n" not in items[0].reason


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="GGUF model file not found"):
        LocalProvider(model_path=tmp_path / "missing.gguf")


@pytest.mark.parametrize("words", [40, 200])  # over n_ctx only with the template / outright
async def test_prompt_larger_than_the_context_is_a_bad_request(gguf: Path, words: int) -> None:
    provider = LocalProvider(model_path=gguf, n_ctx=64)
    try:
        reply = await asyncio.wait_for(collect(provider.stream(ask("word " * words))), 120)
        after = await asyncio.wait_for(collect(provider.stream(ask("Hi", max_tokens=4))), 120)
    finally:
        await provider.aclose()
    assert reply.failure is not None
    assert reply.failure.kind == "bad_request"
    assert "raise n_ctx (now 64)" in reply.failure.reason
    assert after.ok  # the model recovers for the next call


async def test_a_looping_reply_is_stopped_and_says_so() -> None:
    """The real SmolLM2, with the repetition penalty off, falls into a loop: the provider stops
    it after a few copies (long before the cap) and reports ``ReplyCut("loop")``."""
    provider = LocalProvider(n_ctx=1024)
    provider.model = replace(provider.model, repeat_penalty=1.0)
    try:
        items = await asyncio.wait_for(
            collect_items(
                provider,
                ask("Repeat forever: la la la la la la la la la la la la", max_tokens=200),
            ),
            timeout=120,
        )
    finally:
        await provider.aclose()
    text = "".join(i.text for i in items if isinstance(i, TextDelta))
    assert ReplyCut("loop") in items
    assert len(text.split()) < 60  # stopped at the loop, not at the 200-token cap
    assert trim_repetition(text).count("la") < text.count("la")


async def test_the_reply_cap_cuts_and_says_so_and_the_demo_model_has_its_settings() -> None:
    provider = LocalProvider(n_ctx=1024)
    try:
        assert provider.model.reply_cap == 256 and provider.model.repeat_penalty > 1.0
        assert provider.notice is not None and "demo model" in provider.notice
        assert "kairox models pull" in provider.notice and "Ollama" in provider.notice
        items = await asyncio.wait_for(
            collect_items(provider, ask("Tell me a long story about a dragon.", max_tokens=5)),
            timeout=120,
        )
    finally:
        await provider.aclose()
    assert ReplyCut("length") in items
    assert isinstance(items[-1], UsageReported)


async def uncut_replies(gguf: Path, n_ctx: int, requests: list[ModelRequest]) -> list[str]:
    """Each request's reply from the real model, leaving out those cut by the cap or the loop
    guard (a prefix of a grammatical reply)."""
    provider = LocalProvider(model_path=gguf, n_ctx=n_ctx)
    replies: list[str] = []
    try:
        for request in requests:
            items = [item async for item in provider.stream(request)]
            if not any(isinstance(i, ReplyCut) for i in items):
                replies.append("".join(i.text for i in items if isinstance(i, TextDelta)))
    finally:
        await provider.aclose()
    return replies


GRAMMAR_PROBES = ("My name is Dana and I use Neovim.", "What is 2 + 2?")


async def test_the_local_protocol_grammar_constrains_the_reply(gguf: Path) -> None:
    """With the local protocol prompt a turn asks for its grammar: the reply is at most one
    well-formed user or workspace marker, first, then a non-empty answer."""
    system = build_system_prompt("", kind="local")
    grammar = reply_grammar(system)
    assert grammar is not None
    requests = [
        ModelRequest(
            messages=(
                ChatMessage(role="system", content=system),
                ChatMessage(role="user", content=text),
            ),
            session_id="s1",
            call_index=index,
            max_tokens=96,
            temperature=0.0,
            grammar=grammar,
        )
        for index, text in enumerate(GRAMMAR_PROBES)
    ]
    for reply in await uncut_replies(gguf, 1024, requests):
        assert LOCAL_REPLY.fullmatch(reply), reply
        parsed = parse_memory_markers(reply)
        assert not parsed.rejected and len(parsed.markers) <= 1 and parsed.visible.strip()


async def test_the_extraction_grammar_constrains_the_call(gguf: Path) -> None:
    """The extraction call (worked exchanges, then the conversation) on a real llama.cpp model:
    its answer is "none" or up to three well-formed markers, and nothing else."""
    requests = [
        ModelRequest(
            messages=extraction_messages([ChatMessage(role="user", content=text)], []),
            session_id="s1",
            call_index=index,
            max_tokens=256,
            temperature=0.0,
            purpose="extraction",
            grammar=EXTRACTION_GRAMMAR,
        )
        for index, text in enumerate(GRAMMAR_PROBES)
    ]
    for reply in await uncut_replies(gguf, 2048, requests):
        assert EXTRACTION_ANSWER.fullmatch(reply), reply
        parsed = parse_extraction(reply, session=False)
        assert not parsed.rejected and len(parsed.markers) == reply.count("<memory")
