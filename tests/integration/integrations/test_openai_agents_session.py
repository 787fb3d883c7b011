"""``KairoxSession`` (issue 24): the OpenAI Agents SDK's ``Session`` over a Kairox session's log.

``Runner.run`` drives it over several turns with the SDK's own ``ScriptedModel`` (no network),
on both stores; then the SDK's own session cases, where they apply to a session whose
``get_items`` is an assembled context: add/get/pop/clear, ``limit``, isolation, empty pops.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.memory.session import Session
from agents.testing import ScriptedModel, assistant_message, function_call

from kairox import AppFacade, MemoryScope, MemoryStatus
from kairox.integrations.openai_agents import CONTEXT_HEADER, KairoxSession

MODEL = "openai:gpt-4o-mini"
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "openai_agents_session.py"
set_tracing_disabled(True)  # no trace export: the tests never touch the network


@pytest.fixture
def no_index(workspace: Path) -> Path:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("[retrieval]\nworkspace_index = false\n")
    return workspace


@pytest.fixture
def sessions(no_index: Path) -> Iterator[list[KairoxSession]]:
    opened: list[KairoxSession] = []
    yield opened
    for session in opened:
        session.close()


def open_session(
    opened: list[KairoxSession], workspace: Path, name: str = "chat", **kw: Any
) -> KairoxSession:
    session = KairoxSession(name, workspace=workspace, model=MODEL, **kw)
    opened.append(session)
    return session


def texts(items: list[Any]) -> list[tuple[str, str]]:
    return [
        (i.get("role") or i.get("type"), i.get("content") or i.get("output") or "") for i in items
    ]


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}. Also: the user's password is hunter2"


async def test_runner_over_several_turns(
    backend: str | None, workspace: Path, sessions: list[KairoxSession]
) -> None:
    session = open_session(sessions, workspace)
    assert isinstance(session, Session)
    model = ScriptedModel(
        [
            [
                assistant_message(
                    'Hi Dana! <memory scope="user" key="name">The user is Dana</memory>'
                )
            ],
            [function_call("weather", {"city": "Oslo"}, call_id="call-1")],
            [
                assistant_message(
                    'Sunny. <memory scope="session">The user asked about Oslo</memory>'
                )
            ],
            [assistant_message("You are Dana, and Oslo is sunny.")],
        ]
    )
    agent = Agent(name="helper", instructions="Be brief.", model=model, tools=[weather])

    first = await Runner.run(agent, "Hi, I'm Dana", session=session)
    assert "Hi Dana!" in first.final_output
    facade = AppFacade.open()
    try:
        pending = await facade.memory.list(workspace=workspace, statuses=[MemoryStatus.PENDING])
        assert [(m.scope, m.key, m.body) for m in pending] == [
            (MemoryScope.USER, "name", "The user is Dana")
        ]
        assert pending[0].untrusted_inputs == ()
        await facade.memory.approve(pending[0].id)
    finally:
        facade.close()

    await Runner.run(agent, "Weather in Oslo?", session=session)
    second_call = model.calls[1].input
    sent = json.dumps(second_call)
    assert "The user is Dana" in sent  # the approved memory reaches the model
    assert "Hi, I'm Dana" in sent and "Hi Dana!" in sent  # so does the history
    persona = [i for i in second_call if "You are Kairox" in json.dumps(i)]
    assert persona == []  # the agent's instructions are its only persona

    third = await Runner.run(agent, "Who am I?", session=session)
    assert third.final_output == "You are Dana, and Oslo is sunny."
    history = json.dumps(model.calls[3].input)
    assert "hunter2" in history  # the tool result was recorded and replayed

    facade = AppFacade.open()
    try:
        events = await facade.events.list(session="chat", workspace=workspace)
        kinds = [e.payload.type for e in events]
        assert kinds.count("UserMessageAdded") == 3
        assert kinds.count("AssistantMessageCompleted") == 3
        assert kinds.count("ToolInvocationCompleted") == 1
        session_memories = await facade.memory.list(
            workspace=workspace, session="chat", scopes=[MemoryScope.SESSION]
        )
        # a marker after a tool result is tainted by it: under the default
        # `session_after_untrusted = "accept"` the session memory is accepted and carries it
        assert [(m.body, m.status) for m in session_memories] == [
            ("The user asked about Oslo", MemoryStatus.ACCEPTED)
        ]
        assert [u.kind for u in session_memories[0].untrusted_inputs] == ["tool_result"]
        assert session_memories[0].carries_taint
    finally:
        facade.close()


async def test_memories_and_recall_come_as_one_marked_item(
    workspace: Path, sessions: list[KairoxSession]
) -> None:
    session = open_session(sessions, workspace, budget=1200)
    facade = AppFacade.open()
    try:
        await facade.memory.add(
            workspace=workspace, session=None, scope=MemoryScope.USER, key="tz", body="UTC+1"
        )
    finally:
        facade.close()
    for i in range(30):
        # The first exchange is the only one about the staging database; the last asks about it.
        topic = "where does the staging database live? " if i in (0, 29) else ""
        reply = "the staging database lives on db-7. " if i == 0 else ""
        await session.add_items(
            [
                {"role": "user", "content": f"question {i} {topic}" + "lorem ipsum " * 20},
                {"role": "assistant", "content": f"answer {i} {reply}" + "dolor sit " * 20},
            ]
        )
    items = await session.get_items()
    marked, history = items[0], items[1:]
    assert marked["role"] == "system" and str(marked["content"]).startswith(CONTEXT_HEADER)
    assert "UTC+1" in str(marked["content"])  # the approved memory
    assert "<kairox:recall>" in str(marked["content"])  # recall, within the 1,200-token budget
    assert "You are Kairox" not in str(marked["content"])  # data, no persona
    assert len(history) == 60  # the SDK's items, all of them: the SDK trims with `limit`
    assert await session.get_items(limit=2) == [marked, *history[-2:]]  # never counted
    popped = await session.pop_item()
    assert popped == history[-1]
    await session.clear_session()
    [left] = await session.get_items()  # the memory still reaches the agent; recall does not
    assert "UTC+1" in str(left["content"]) and "<kairox:recall>" not in str(left["content"])
    assert await session.pop_item() is None


# -- the SDK's session cases, where they apply -------------------------------------------------


async def test_add_get_pop_clear(workspace: Path, sessions: list[KairoxSession]) -> None:
    session = open_session(sessions, workspace)
    assert await session.pop_item() is None  # an empty session pops nothing
    await session.add_items(
        [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
            {"role": "user", "content": "How are you?"},
            {"role": "assistant", "content": "Fine, thanks."},
        ]
    )
    history = texts(await session.get_items())
    assert history == [
        ("user", "Hello"),
        ("assistant", "Hi there!"),
        ("user", "How are you?"),
        ("assistant", "Fine, thanks."),
    ]
    assert texts(await session.get_items(limit=2)) == [
        ("user", "How are you?"),
        ("assistant", "Fine, thanks."),
    ]
    popped = await session.pop_item()
    assert popped is not None and popped.get("content") == "Fine, thanks."
    assert texts(await session.get_items(limit=1)) == [("user", "How are you?")]
    await session.clear_session()
    assert await session.get_items() == []  # nothing left, and no Kairox item of its own
    assert await session.pop_item() is None
    # the log keeps what was popped and cleared (append-only), for the trace and replay
    facade = AppFacade.open()
    try:
        events = await facade.events.list(session="chat", workspace=workspace)
    finally:
        facade.close()
    assert [e.payload.type for e in events].count("HistoryRewound") == 2
    assert [e.payload.type for e in events].count("AssistantMessageCompleted") == 2


async def test_function_calls_round_trip(workspace: Path, sessions: list[KairoxSession]) -> None:
    session = open_session(sessions, workspace)
    await session.add_items(
        [
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Sunny"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"role": "assistant", "content": [{"type": "output_text", "text": "It is sunny."}]},
        ]
    )
    assert await session.get_items() == [
        {"role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "Sunny"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"role": "assistant", "content": [{"type": "output_text", "text": "It is sunny."}]},
    ]


async def test_sessions_are_isolated(workspace: Path, sessions: list[KairoxSession]) -> None:
    one = open_session(sessions, workspace, "one")
    two = open_session(sessions, workspace, "two")
    await one.add_items([{"role": "user", "content": "only in one"}])
    await two.add_items([{"role": "user", "content": "only in two"}])
    assert texts(await one.get_items(limit=1)) == [("user", "only in one")]
    assert texts(await two.get_items(limit=1)) == [("user", "only in two")]
    # a second object on the same session id sees the same history
    again = open_session(sessions, workspace, "one")
    assert texts(await again.get_items(limit=1)) == [("user", "only in one")]


def test_the_example_runs(workspace: Path, kairox_home: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        check=True,
        cwd=workspace,
        env=os.environ.copy(),
        timeout=300,
    )
    assert done.stdout.splitlines() == [
        "agent: Noted! ",
        "approving: The user drinks green tea",
        "agent: Green tea, as you like it.",
        "the approved memory reached the model: True",
    ]
    assert not kairox_home.exists()  # it wrote into a temporary home, not the user's
