"""The openai provider against a real OpenAI-compatible server (llama_cpp.server on SmolLM2).

Also: a dead endpoint, a server killed mid-stream, and scripted protocol cases from a fake server
(bad key, tool-call deltas, a server that rejects stream_options, no finish_reason, a timeout).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from typing import Any, Protocol

import pytest

from kairox.core.events import Usage
from kairox.core.messages import ChatMessage
from kairox.models import (
    ModelRequest,
    ProviderSettings,
    StreamFailed,
    StreamItem,
    TextDelta,
    ToolCallRequested,
    ToolSpec,
    UsageReported,
    create_provider,
)
from kairox.models.base import ModelProvider

pytestmark = pytest.mark.slow


class LlamaServer(Protocol):  # the conftest fixtures' shapes, without importing conftest
    base_url: str
    process: subprocess.Popen[bytes]


class FakeApi(Protocol):
    openai_url: str
    bad_key: str

    def last_request(self) -> dict[str, Any]: ...


STORY = "Write a long story about a dragon who learns to bake bread. Make it ten paragraphs."


def ask(text: str, *, max_tokens: int = 16, tools: tuple[ToolSpec, ...] = ()) -> ModelRequest:
    return ModelRequest(
        messages=(
            ChatMessage(role="system", content="You are a helpful assistant."),
            ChatMessage(role="user", content=text),
        ),
        session_id="s1",
        call_index=0,
        max_tokens=max_tokens,
        temperature=0.0,
        tools=tools,
    )


async def drain(provider: ModelProvider, request: ModelRequest) -> list[StreamItem]:
    async def run() -> list[StreamItem]:
        return [item async for item in provider.stream(request)]

    try:
        return await asyncio.wait_for(run(), timeout=120)
    finally:
        await provider.aclose()


def openai_at(base_url: str, model: str = "smollm2", **settings: object) -> ModelProvider:
    return create_provider(
        f"openai:{model}", settings=ProviderSettings(base_url=base_url, **settings)
    )


async def test_streams_text_deltas_then_usage(llama_server: str) -> None:
    items = await drain(openai_at(llama_server), ask("Say hello to the world."))
    deltas = [item for item in items if isinstance(item, TextDelta)]
    assert len(deltas) > 1
    assert "".join(d.text for d in deltas).strip()
    assert not any(isinstance(item, StreamFailed) for item in items)
    last = items[-1]
    assert isinstance(last, UsageReported)
    assert 0 < last.usage.completion_tokens <= 16


async def test_dead_endpoint_is_a_one_line_connection_failure(dead_base_url: str) -> None:
    url = dead_base_url
    items = await drain(openai_at(url), ask("hi"))
    assert items == [
        StreamFailed(
            f"cannot reach {url}: connection refused; is the server running?", "connection"
        )
    ]


async def test_server_killed_mid_stream_ends_with_stream_failed(
    llama_server_factory: Callable[[], LlamaServer],
) -> None:
    server = llama_server_factory()
    provider = openai_at(server.base_url)
    items: list[StreamItem] = []

    async def consume() -> None:
        async for item in provider.stream(ask(STORY, max_tokens=400)):
            items.append(item)
            if isinstance(item, TextDelta) and server.process.poll() is None:
                server.process.kill()  # SIGKILL: no goodbye, the socket just drops

    try:
        await asyncio.wait_for(consume(), timeout=120)
    finally:
        await provider.aclose()
    assert server.process.wait(timeout=30) != 0
    assert isinstance(items[0], TextDelta)
    last = items[-1]
    assert isinstance(last, StreamFailed)
    assert last == StreamFailed(
        "stream ended before the reply finished (server disconnected)", "disconnect"
    )
    assert "\n" not in last.reason
    assert sum(isinstance(item, StreamFailed) for item in items) == 1
    assert not any(isinstance(item, UsageReported) for item in items)


async def test_bad_key_is_an_auth_failure(
    fake_api: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KX_FAKE_OPENAI_KEY", fake_api.bad_key)
    provider = openai_at(fake_api.openai_url, api_key_env="KX_FAKE_OPENAI_KEY")
    items = await drain(provider, ask("hi"))
    assert items == [
        StreamFailed("authentication failed: check the API key in $KX_FAKE_OPENAI_KEY", "auth")
    ]


async def test_missing_key_for_a_remote_endpoint_fails_without_a_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KX_NO_SUCH_KEY", raising=False)
    provider = openai_at("https://api.example.invalid/v1", api_key_env="KX_NO_SUCH_KEY")
    items = await drain(provider, ask("hi"))
    assert len(items) == 1
    assert isinstance(items[0], StreamFailed)
    assert items[0].kind == "auth"
    assert "$KX_NO_SUCH_KEY" in items[0].reason


async def test_tool_call_deltas_are_accumulated(fake_api: FakeApi) -> None:
    tool = ToolSpec(
        "read_file",
        "Read a workspace file",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    )
    items = await drain(openai_at(fake_api.openai_url, "fake-tool"), ask("read", tools=(tool,)))
    calls = [item.call for item in items if isinstance(item, ToolCallRequested)]
    assert [(c.id, c.name) for c in calls] == [
        ("call_abc", "read_file"),
        ("call_def", "workspace_search"),
    ]
    assert json.loads(calls[0].arguments) == {"path": "README.md"}
    assert items[0] == TextDelta("Checking.")
    assert items[-1] == UsageReported(Usage(prompt_tokens=21, completion_tokens=9))
    body = fake_api.last_request()["body"]
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert body["tools"][0]["function"]["parameters"]["required"] == ["path"]
    assert body["stream_options"] == {"include_usage": True}


async def test_server_rejecting_stream_options_gets_a_retry_without_it(fake_api: FakeApi) -> None:
    provider = openai_at(fake_api.openai_url, "fake-no-stream-options")
    items = await drain(provider, ask("count"))
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "one two three"
    assert items[-1] == UsageReported(Usage(completion_tokens=3))  # estimated: one per chunk
    assert "stream_options" not in fake_api.last_request()["body"]


async def test_stream_without_finish_reason_is_a_disconnect(fake_api: FakeApi) -> None:
    items = await drain(openai_at(fake_api.openai_url, "fake-no-finish"), ask("count"))
    assert items[-1] == StreamFailed(
        "stream ended before the reply finished (server disconnected)", "disconnect"
    )
    assert sum(isinstance(i, TextDelta) for i in items) == 3


async def test_dropped_connection_mid_body_is_a_disconnect(fake_api: FakeApi) -> None:
    items = await drain(openai_at(fake_api.openai_url, "fake-disconnect"), ask("count"))
    last = items[-1]
    assert isinstance(last, StreamFailed)
    assert last.kind == "disconnect"
    assert not any(isinstance(i, UsageReported) for i in items)


async def test_slow_server_times_out(fake_api: FakeApi) -> None:
    provider = openai_at(fake_api.openai_url, "fake-slow", timeout_s=0.5)
    items = await drain(provider, ask("hi"))
    assert len(items) == 1
    assert isinstance(items[0], StreamFailed)
    assert items[0].kind == "timeout"
    assert "0.5 s" in items[0].reason


async def test_abandoned_stream_leaves_the_provider_usable(llama_server: str) -> None:
    provider = openai_at(llama_server)
    try:
        stream = provider.stream(ask(STORY, max_tokens=200))
        first = await asyncio.wait_for(anext(stream), timeout=120)
        assert isinstance(first, TextDelta)
        await stream.aclose()  # the consumer walks away: the HTTP response is closed
        items = await asyncio.wait_for(
            collect_items(provider, ask("Say hi.", max_tokens=8)), timeout=120
        )
    finally:
        await provider.aclose()
    assert isinstance(items[-1], UsageReported)


async def collect_items(provider: ModelProvider, request: ModelRequest) -> list[StreamItem]:
    return [item async for item in provider.stream(request)]
