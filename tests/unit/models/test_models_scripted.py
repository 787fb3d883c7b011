"""The scripted model: parsing, chunking, purposes, exhaustion, tool calls, errors, hang."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest

from helpers import write_script as script_file
from kairox.core.errors import ConfigError
from kairox.core.events import Usage
from kairox.core.messages import ChatMessage
from kairox.models import (
    ModelRequest,
    Purpose,
    StreamFailed,
    StreamItem,
    TextDelta,
    ToolCallRequested,
    UsageReported,
    collect,
)
from kairox.testing.scripted_model import (
    ScriptedProvider,
    ScriptLine,
    load_script,
    parse_script,
    write_script,
)


def request(index: int = 0, purpose: Purpose = "reply") -> ModelRequest:
    return ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),),
        session_id="s1",
        call_index=index,
        purpose=purpose,
    )


async def items(provider: ScriptedProvider, req: ModelRequest) -> list[StreamItem]:
    return [item async for item in provider.stream(req)]


async def test_text_is_split_into_four_char_deltas_by_default(tmp_path: Path) -> None:
    provider = ScriptedProvider.from_file(script_file(tmp_path, {"text": "Hello world"}))
    got = await items(provider, request())
    assert got == [
        TextDelta("Hell"),
        TextDelta("o wo"),
        TextDelta("rld"),
        UsageReported(Usage(completion_tokens=3)),
    ]


async def test_chunk_size_and_explicit_deltas(tmp_path: Path) -> None:
    path = script_file(tmp_path, {"text": "abcdef", "chunk": 2}, {"deltas": ["x", "", "yz"]})
    provider = ScriptedProvider.from_file(path)
    first = await items(provider, request(0))
    second = await items(provider, request(1))
    assert [i.text for i in first if isinstance(i, TextDelta)] == ["ab", "cd", "ef"]
    assert [i.text for i in second if isinstance(i, TextDelta)] == ["x", "yz"]
    assert second[-1] == UsageReported(Usage(completion_tokens=2))


async def test_purposes_are_counted_separately(tmp_path: Path) -> None:
    path = script_file(
        tmp_path,
        {"text": "reply one"},
        {"text": "summary one", "purpose": "summary"},
        {"text": "reply two"},
    )
    provider = ScriptedProvider.from_file(path)
    assert (await collect(provider.stream(request(0)))).text == "reply one"
    assert (await collect(provider.stream(request(1)))).text == "reply two"
    assert (await collect(provider.stream(request(0, "summary")))).text == "summary one"


async def test_running_out_fails_with_a_clear_reason(tmp_path: Path) -> None:
    path = script_file(tmp_path, {"text": "only"}, {"text": "sum", "purpose": "summary"})
    provider = ScriptedProvider.from_file(path)
    got = await items(provider, request(1))
    assert got == [
        StreamFailed(
            f"scripted model has no reply #2 for purpose 'reply' in {path}; add more lines",
            "script_exhausted",
        )
    ]
    summary = await items(provider, request(1, "summary"))
    assert isinstance(summary[-1], StreamFailed)
    assert "purpose 'summary'" in summary[-1].reason


async def test_tool_call_line_yields_deterministic_call(tmp_path: Path) -> None:
    path = script_file(
        tmp_path,
        {"text": "x"},
        {"text": "Let me look.", "tool_call": {"name": "read_file", "arguments": {"path": "a.md"}}},
    )
    provider = ScriptedProvider.from_file(path)
    reply = await collect(provider.stream(request(1)))
    assert reply.text == "Let me look."
    assert len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    assert (call.id, call.name) == ("call_1", "read_file")
    assert json.loads(call.arguments) == {"path": "a.md"}
    got = await items(provider, request(1))
    assert isinstance(got[-2], ToolCallRequested)
    assert isinstance(got[-1], UsageReported)


async def test_error_line_streams_its_text_then_fails(tmp_path: Path) -> None:
    path = script_file(tmp_path, {"text": "partial", "error": "server went away"})
    got = await items(ScriptedProvider.from_file(path), request())
    assert got[-1] == StreamFailed("server went away", "other")
    assert [type(i) for i in got[:-1]] == [TextDelta, TextDelta]
    assert not any(isinstance(i, UsageReported) for i in got)


async def test_provided_usage_wins(tmp_path: Path) -> None:
    path = script_file(
        tmp_path, {"text": "abc", "usage": {"prompt_tokens": 7, "completion_tokens": 9}}
    )
    got = await items(ScriptedProvider.from_file(path), request())
    assert got[-1] == UsageReported(Usage(prompt_tokens=7, completion_tokens=9))


async def test_pause_ms_paces_the_deltas() -> None:
    """The consumer sees each delta before the next is made: a model at that pace."""
    provider = ScriptedProvider([ScriptLine(text="abcdefgh", chunk=2, pause_ms=20)])
    loop = asyncio.get_running_loop()
    times: list[float] = []
    async for item in provider.stream(request()):
        if isinstance(item, TextDelta):
            times.append(loop.time())
    assert len(times) == 4
    assert all(later - earlier >= 0.015 for earlier, later in itertools.pairwise(times))


async def test_hang_line_waits_until_cancelled() -> None:
    provider = ScriptedProvider([ScriptLine(text="wait", hang=True)])
    seen: list[StreamItem] = []
    first_delta = asyncio.Event()

    async def consume() -> None:
        async for item in provider.stream(request()):
            seen.append(item)
            first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), timeout=5)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == [TextDelta("wait")]


def test_bad_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok"}\n\n{"text": oops}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        ScriptedProvider.from_file(path)
    message = str(err.value)
    assert str(path) in message
    assert "line 3" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("[1, 2]", "not a JSON object"),
        ('{"txt": "typo"}', "txt"),
        ('{"text": "a", "deltas": ["a"]}', "either"),
        ('{"purpose": "reply"}', "needs"),
        ('{"text": "a", "chunk": 0}', "chunk"),
        ('{"text": "a", "purpose": "other"}', "purpose"),
    ],
)
def test_invalid_lines_are_config_errors(line: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_script(line, source="s.jsonl")
    assert "s.jsonl" in str(err.value)
    assert "line 1" in str(err.value)
    assert fragment in str(err.value)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the model script"):
        load_script(tmp_path / "nope.jsonl")


async def test_write_script_round_trips(tmp_path: Path) -> None:
    path = write_script(
        tmp_path / "w.jsonl",
        [ScriptLine(text="hello", chunk=2), {"text": "sum", "purpose": "summary"}],
    )
    lines = load_script(path)
    assert [line.text for line in lines] == ["hello", "sum"]
    assert lines[0].chunk == 2
    provider = ScriptedProvider.from_file(path)
    assert provider.spec == f"scripted:{path}"
    assert provider.model_name == "scripted"
    reply = await collect(provider.stream(request()))
    assert reply.text == "hello"
    assert reply.usage == Usage(completion_tokens=3)
