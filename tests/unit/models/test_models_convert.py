"""Message conversion for each backend, tool-call accumulation, and draining a stream."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx2
import openai
from openai.types.chat import ChatCompletionChunk

from kairox.context.render import summary_message
from kairox.core.events import UntrustedInput, Usage
from kairox.core.messages import ChatMessage, ToolCall, opening_notes_as_system
from kairox.models import (
    StreamFailed,
    StreamItem,
    TextDelta,
    ToolCallRequested,
    UsageReported,
    collect,
)
from kairox.models.anthropic import to_anthropic_messages
from kairox.models.failures import DISCONNECT_REASON, FailureContext, sdk_failure
from kairox.models.local import to_llama_messages
from kairox.models.openai import (
    OPENAI_ERRORS,
    ToolCallAccumulator,
    to_openai_messages,
)

CALL = ToolCall(id="c1", name="read_file", arguments='{"path": "a.md"}')
CONVERSATION = (
    ChatMessage(role="system", content="sys"),
    ChatMessage(role="user", content="read a.md"),
    ChatMessage(role="assistant", content="", tool_calls=(CALL,)),
    ChatMessage(role="tool", content="A", tool_call_id="c1", name="read_file"),
    ChatMessage(role="assistant", content="It says A."),
)


def test_openai_messages_keep_roles_and_tool_links() -> None:
    out = to_openai_messages(CONVERSATION)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "assistant"]
    assert out[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.md"}'},
            }
        ],
    }
    assert out[3] == {"role": "tool", "content": "A", "tool_call_id": "c1"}


SUMMARY = summary_message(
    1, 9, "They chose Postgres.", (UntrustedInput(kind="tool_result", ref="seq:4"),)
)
SUMMARISED = (
    ChatMessage(role="system", content="sys"),
    SUMMARY,
    ChatMessage(role="user", content="and the port?"),
)


def test_a_compaction_summary_is_an_assistant_note_where_the_provider_allows() -> None:
    # OpenAI-compatible servers take an assistant message ahead of the user's.
    assert [(m["role"], m["content"]) for m in to_openai_messages(SUMMARISED)][1] == (
        "assistant",
        SUMMARY.content,
    )
    # Anthropic's conversation must open with the user: the note joins the system text there,
    # still marked untrusted; the turns start with the user's message.
    system, out = to_anthropic_messages(SUMMARISED)
    assert system == f"sys\n\n{SUMMARY.content}" and 'untrusted="tool result seq:4"' in system
    assert [m["role"] for m in out] == ["user"]
    # A llama.cpp chat template may insist on the user first too.
    assert [m["role"] for m in to_llama_messages(SUMMARISED)] == ["system", "system", "user"]
    # Later assistant messages are the conversation's own and keep their role everywhere.
    assert opening_notes_as_system(CONVERSATION) == CONVERSATION


def test_anthropic_messages_lift_system_and_alternate_roles() -> None:
    system, out = to_anthropic_messages(CONVERSATION)
    assert system == "sys"
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant"]
    assert out[1]["content"] == [
        {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.md"}}
    ]


def test_anthropic_bad_tool_arguments_become_an_empty_input() -> None:
    broken = ChatMessage(
        role="assistant",
        content="x",
        tool_calls=(ToolCall(id="c2", name="t", arguments="not json"),),
    )
    _, out = to_anthropic_messages((ChatMessage(role="user", content="u"), broken))
    assert out[1]["content"] == [
        {"type": "text", "text": "x"},
        {"type": "tool_use", "id": "c2", "name": "t", "input": {}},
    ]


def test_llama_messages_fold_tool_results_into_user_text() -> None:
    out = to_llama_messages(CONVERSATION)
    assert out[3] == {"role": "user", "content": "[tool result read_file]\nA"}
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant"]


def chunk(tool_calls: list[dict[str, object]], finish: str | None = None) -> ChatCompletionChunk:
    return ChatCompletionChunk.model_validate(
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": {"tool_calls": tool_calls}, "finish_reason": finish}],
        }
    )


def test_tool_call_fragments_join_by_index() -> None:
    acc = ToolCallAccumulator(call_index=3)
    acc.add(chunk([{"index": 1, "function": {"name": "second", "arguments": "{}"}}]))
    acc.add(chunk([{"index": 0, "id": "a", "function": {"name": "first", "arguments": '{"q"'}}]))
    acc.add(chunk([{"index": 0, "function": {"arguments": ": 1}"}}]))
    calls = acc.calls()
    assert calls == [
        ToolCall(id="a", name="first", arguments='{"q": 1}'),
        ToolCall(id="call_3_1", name="second", arguments="{}"),  # no id sent: a stable one
    ]


async def test_collect_gathers_text_calls_usage_and_failure() -> None:
    async def ok() -> AsyncIterator[StreamItem]:
        yield TextDelta("a")
        yield TextDelta("b")
        yield ToolCallRequested(CALL)
        yield UsageReported(Usage(prompt_tokens=1, completion_tokens=2))

    async def bad() -> AsyncIterator[StreamItem]:
        yield TextDelta("partial")
        yield StreamFailed("gone", "disconnect")

    good = await collect(ok())
    assert (good.text, good.tool_calls, good.ok) == ("ab", (CALL,), True)
    assert good.usage == Usage(prompt_tokens=1, completion_tokens=2)
    failed = await collect(bad())
    assert failed.ok is False
    assert failed.failure == StreamFailed("gone", "disconnect")
    assert failed.text == "partial"


def test_sdk_wrapped_httpx2_and_anyio_drops_are_disconnects() -> None:
    ctx = FailureContext(endpoint="http://h/v1", api_key_env=None, model="m", timeout_s=5)
    request = httpx2.Request("POST", "http://h/v1/chat/completions")
    for cause in (httpx2.RemoteProtocolError("incomplete chunked read"), anyio.EndOfStream()):
        try:
            try:
                raise cause
            except Exception as inner:
                raise openai.APIConnectionError(request=request) from inner  # type: ignore[arg-type]
        except openai.APIConnectionError as exc:
            failure = sdk_failure(exc, OPENAI_ERRORS, ctx)
        assert failure == StreamFailed(DISCONNECT_REASON, "disconnect")
