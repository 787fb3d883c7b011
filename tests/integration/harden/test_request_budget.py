"""What is sent beside the messages counts inside the budget: the tool definitions are a traced
item of the prompt, and ``max_tokens`` is what the window leaves, so prompt + tool definitions +
reply fit the window. One model round runs at most ``MAX_TOOL_CALLS_PER_ROUND`` tool calls
(issue 21, Medium). A logging OpenAI-compatible server on loopback records every request."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harden_fakes import Kx, LoggingServer

from kairox.context.tokens import TokenizerRegistry
from kairox.core.messages import ChatMessage
from kairox.runtime.tools import tool_schema_tokens
from kairox.runtime.turn import MAX_TOOL_CALLS_PER_ROUND

WINDOW = 1400


def _user(tmp_path: Path, server: LoggingServer, extra: str = "") -> dict[str, str]:
    user = tmp_path / "user.toml"
    user.write_text(
        'default_profile = "remote"\n[profiles.remote]\nmodel = "openai:fake"\n'
        f'base_url = "{server.openai_url}"\napi_key_env = "MY_KEY"\n{extra}'
        "[retrieval]\nworkspace_index = false\n"
    )
    return {"KAIROX_CONFIG": str(user), "MY_KEY": "k"}


def test_prompt_tool_definitions_and_reply_fit_the_window(
    tmp_path: Path, workspace: Path, logging_openai: Callable[[], LoggingServer], kx: Kx
) -> None:
    server = logging_openai()
    # max_output_tokens above what the window leaves: the request must still fit.
    env = _user(
        tmp_path, server, f"context_window = {WINDOW}\nheadroom = 200\nmax_output_tokens = 1000\n"
    )
    prompt = " ".join(f"word{i}" for i in range(20))
    result = kx("send", "--workspace", str(workspace), prompt, env=env)
    assert result.returncode == 0, result.stderr
    tokenizer = TokenizerRegistry().for_model("openai:fake")
    schemas = tool_schema_tokens(tokenizer)
    [request] = server.requests
    body = request["body"]
    assert isinstance(body, dict)
    assert len(body["tools"]) == 3
    messages = [ChatMessage(role=m["role"], content=m["content"]) for m in body["messages"]]
    sent = tokenizer.count_messages(messages)
    assert sent + schemas + body["max_tokens"] <= WINDOW, (sent, schemas, body["max_tokens"])

    trace = json.loads(kx("context", "--workspace", str(workspace), "--json", env=env).stdout)
    [tools] = [i for i in trace["items"] if i["ref"] == "tools"]
    assert tools["source"] == "system" and tools["tokens"] == schemas
    assert trace["used"] == sent + schemas and trace["used"] <= trace["budget"]
    assert body["max_tokens"] == WINDOW - trace["used"]


def test_one_model_round_runs_a_bounded_number_of_tool_calls(
    tmp_path: Path, workspace: Path, logging_openai: Callable[[], LoggingServer], kx: Kx
) -> None:
    (workspace / "notes.md").write_text("x" * 60_000)
    server = logging_openai()
    server.tool_calls = 300
    env = _user(tmp_path, server, "context_window = 200000\n")
    result = kx("send", "--workspace", str(workspace), "read everything", env=env)
    assert result.returncode == 0, result.stderr
    events = json.loads(kx("events", "--workspace", str(workspace), "--json", env=env).stdout)
    tools = [e for e in events if e["type"] == "ToolInvocationCompleted"]
    assert len(tools) == MAX_TOOL_CALLS_PER_ROUND
    assert "292 more tool calls of this round were not run" in tools[-1]["payload"]["result"]
    second = server.requests[1]["body"]
    assert isinstance(second, dict)
    asked = [c for m in second["messages"] for c in m.get("tool_calls") or []]
    assert len(asked) == MAX_TOOL_CALLS_PER_ROUND
