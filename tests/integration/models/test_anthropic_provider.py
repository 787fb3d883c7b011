"""The anthropic provider against a fake Messages API on loopback (SSE streaming over HTTP/1.1).

Covers text and usage, tool_use blocks, how messages and the system prompt are sent, a bad key,
a connection dropped mid-stream, and a dead endpoint.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

import pytest

from kairox.core.events import Usage
from kairox.core.messages import ChatMessage, ToolCall
from kairox.models import (
    ModelProvider,
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

pytestmark = pytest.mark.slow


class FakeApi(Protocol):  # the conftest fixture's shape, without importing conftest
    base_url: str
    bad_key: str

    def last_request(self) -> dict[str, Any]: ...


def request(*messages: ChatMessage, tools: tuple[ToolSpec, ...] = ()) -> ModelRequest:
    return ModelRequest(messages=messages, session_id="s1", call_index=0, tools=tools)


def anthropic_at(base_url: str, model: str, **settings: object) -> ModelProvider:
    return create_provider(
        f"anthropic:{model}", settings=ProviderSettings(base_url=base_url, **settings)
    )


async def drain(provider: ModelProvider, req: ModelRequest) -> list[StreamItem]:
    async def run() -> list[StreamItem]:
        return [item async for item in provider.stream(req)]

    try:
        return await asyncio.wait_for(run(), timeout=60)
    finally:
        await provider.aclose()


HELLO = (ChatMessage(role="user", content="hi"),)


async def test_streams_text_and_usage(fake_api: FakeApi) -> None:
    items = await drain(anthropic_at(fake_api.base_url, "fake-text"), request(*HELLO))
    assert items == [
        TextDelta("Hel"),
        TextDelta("lo "),
        TextDelta("world"),
        UsageReported(Usage(prompt_tokens=12, completion_tokens=7)),
    ]


async def test_system_messages_go_to_the_system_parameter(fake_api: FakeApi) -> None:
    messages = (
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="read it"),
        ChatMessage(
            role="assistant",
            content="",
            tool_calls=(ToolCall(id="toolu_9", name="read_file", arguments='{"path": "a"}'),),
        ),
        ChatMessage(role="tool", content="file body", tool_call_id="toolu_9", name="read_file"),
        ChatMessage(role="system", content="Memory: user likes tea."),
        ChatMessage(role="user", content="thanks"),
    )
    await drain(anthropic_at(fake_api.base_url, "fake-text"), request(*messages))
    sent = fake_api.last_request()
    body = sent["body"]
    assert sent["path"] == "/v1/messages"
    assert body["system"] == "Be brief.\n\nMemory: user likes tea."
    assert body["stream"] is True
    assert body["max_tokens"] == 1024
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {"path": "a"}}
    ]
    # the tool result and the next user text share one user turn, as the API requires
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "file body"},
        {"type": "text", "text": "thanks"},
    ]


async def test_tool_use_blocks_become_tool_calls(fake_api: FakeApi) -> None:
    tool = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {}})
    provider = anthropic_at(fake_api.base_url, "fake-tool")
    items = await drain(provider, request(*HELLO, tools=(tool,)))
    calls = [item.call for item in items if isinstance(item, ToolCallRequested)]
    assert len(calls) == 1
    assert (calls[0].id, calls[0].name) == ("toolu_01", "read_file")
    assert json.loads(calls[0].arguments) == {"path": "README.md"}
    assert isinstance(items[-1], UsageReported)
    assert fake_api.last_request()["body"]["tools"] == [
        {
            "name": "read_file",
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {}},
        }
    ]


async def test_bad_key_is_an_auth_failure(
    fake_api: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KX_FAKE_ANTHROPIC_KEY", fake_api.bad_key)
    provider = anthropic_at(fake_api.base_url, "fake-text", api_key_env="KX_FAKE_ANTHROPIC_KEY")
    items = await drain(provider, request(*HELLO))
    assert items == [
        StreamFailed("authentication failed: check the API key in $KX_FAKE_ANTHROPIC_KEY", "auth")
    ]
    headers = {k.lower(): v for k, v in fake_api.last_request()["headers"].items()}
    assert fake_api.bad_key in str(headers.get("x-api-key") or headers.get("authorization"))


async def test_connection_dropped_mid_stream_is_a_disconnect(fake_api: FakeApi) -> None:
    items = await drain(anthropic_at(fake_api.base_url, "fake-disconnect"), request(*HELLO))
    assert items[0] == TextDelta("Hel")
    assert items[-1] == StreamFailed(
        "stream ended before the reply finished (server disconnected)", "disconnect"
    )
    assert not any(isinstance(item, UsageReported) for item in items)


async def test_dead_endpoint_is_a_connection_failure(dead_base_url: str) -> None:
    root = dead_base_url.removesuffix("/v1")
    items = await drain(anthropic_at(root, "any"), request(*HELLO))
    assert items == [
        StreamFailed(
            f"cannot reach {root}: connection refused; is the server running?", "connection"
        )
    ]
