"""What the user approved reaches the model, and what failed never comes back (issues 12 and 13).

Driven through the facade with the scripted model and a real home database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from kairox.app import AppFacade, TurnDone
from kairox.context.tokens import TokenizerRegistry
from kairox.core.events import ContextAssembled, ToolInvocationCompleted, TurnFailed
from kairox.core.outcomes import TurnOutcome
from kairox.core.types import Actor, ContextSource, MemoryScope
from kairox.models.base import ModelRequest, StreamItem
from kairox.models.scripted import ScriptedProvider

Script = Callable[..., str]
SESSION = "fid"


def words(n: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def profile(workspace: Path, model: str, window: int, headroom: int = 200) -> None:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        f'default_profile = "small"\n[profiles.small]\nmodel = "{model}"\n'
        f"context_window = {window}\nheadroom = {headroom}\n"
        "[retrieval]\nworkspace_index = false\n[compaction]\nenabled = false\n"
    )


async def send(facade: AppFacade, workspace: Path, text: str) -> TurnOutcome:
    await facade.chat.open(SESSION, workspace=workspace)
    outcome: TurnOutcome | None = None
    async for update in facade.chat.send(SESSION, text):
        if isinstance(update, TurnDone):
            outcome = update.outcome
    assert outcome is not None
    return outcome


@pytest.fixture
async def facade() -> AsyncIterator[AppFacade]:
    app = AppFacade.open()
    try:
        yield app
    finally:
        await app.aclose()
        app.close()


async def last_trace(facade: AppFacade) -> ContextAssembled:
    trace = await facade.context.trace(SESSION)
    assert trace is not None
    return trace


async def test_twelve_approved_memories_beat_old_history(
    facade: AppFacade, workspace: Path, script: Script
) -> None:
    """The issue's case: window 2000, twelve approved memories, 850 tokens of history."""
    profile(workspace, script(*({"text": words(8, "r")} for _ in range(12))), 2000)
    await send(facade, workspace, "Hello")
    info = await facade.sessions.get(SESSION)
    store = facade.services.memories
    for n in range(12):  # approved early, then a long conversation
        scope = MemoryScope.USER if n % 2 else MemoryScope.WORKSPACE
        record = store.propose(
            scope,
            f"fact.{n}",
            words(5, f"m{n}_"),
            workspace_id=info.workspace_id,
            session_id=None,
        )
        store.accept(record.id, actor=Actor.USER)
    for n in range(10):
        await send(facade, workspace, words(10, f"q{n}_"))
    await send(facade, workspace, "What do you know?")
    trace = await last_trace(facade)
    memories = [i for i in trace.items if i.source is ContextSource.MEMORY]
    assert len(memories) == 12 and all(i.included for i in memories), memories
    assert trace.by_source[ContextSource.MEMORY] > 0.25 * trace.budget  # past the quota
    history = [i for i in trace.items if i.source is ContextSource.HISTORY]
    assert history[-1].included  # the latest exchange stays
    assert trace.used <= trace.budget


async def test_a_refused_prompt_is_never_sent_later(
    facade: AppFacade, workspace: Path, script: Script
) -> None:
    profile(workspace, script({"text": "hello"}, {"text": "again"}), 1200)
    huge = words(1500, "huge")
    refused = await send(facade, workspace, huge)
    assert refused.failure and "context overflow" in refused.failure
    info = await facade.sessions.get(SESSION)
    log = facade.services.events.read(session_id=info.id)
    [failed] = [e.payload for e in log if isinstance(e.payload, TurnFailed)]
    assert failed.refused  # marked refused, and the prompt stays in the log
    assert any(getattr(e.payload, "text", None) == huge for e in log)
    ok = await send(facade, workspace, "hi")
    assert ok.failure is None and ok.reply == "hello"
    await send(facade, workspace, "and again")
    for turn in (2, 3):
        messages = await facade.context.replay(SESSION, turn)
        assert not any("huge0" in m.content for m in messages)


async def test_a_turn_that_failed_before_its_reply_is_not_replayed(
    facade: AppFacade, workspace: Path, script: Script
) -> None:
    profile(workspace, script({"error": "endpoint went away"}, {"text": "fine"}), 4000)
    failed = await send(facade, workspace, "first question that failed")
    assert failed.failure
    await send(facade, workspace, "second question")
    messages = await facade.context.replay(SESSION, 2)
    assert not any("first question" in m.content for m in messages)
    trace = await last_trace(facade)
    assert [i.source for i in trace.items if i.source is ContextSource.HISTORY] == []


async def test_a_missing_key_turn_is_not_replayed(workspace: Path, script: Script) -> None:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        '[profiles.local]\nmodel = "openai:gpt-4o"\napi_key_env = "KAIROX_TEST_NO_SUCH_KEY"\n'
        "context_window = 8192\nheadroom = 512\n[retrieval]\nworkspace_index = false\n"
    )
    first = AppFacade.open()
    first.trust.trust(workspace)  # the key variable is a protected setting
    try:
        outcome = await send(first, workspace, "question without a key")
        assert outcome.failure and "KAIROX_TEST_NO_SUCH_KEY" in outcome.failure
    finally:
        await first.aclose()
        first.close()
    second = AppFacade.open(model=script({"text": "unused"}, {"text": "ok"}))
    try:
        assert (await send(second, workspace, "next question")).reply == "ok"
        messages = await second.context.replay(SESSION, 2)
        assert not any("without a key" in m.content for m in messages)
    finally:
        await second.aclose()
        second.close()


async def test_every_request_fits_the_budget_tool_rounds_included(
    facade: AppFacade, workspace: Path, script: Script, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "big.txt").write_text("\n".join(f"line {n} " + "data " * 12 for n in range(1200)))
    model = script(
        {"tool_call": {"name": "read_file", "arguments": {"path": "big.txt"}}},
        {"text": "I read it."},
    )
    profile(workspace, model, 2000)
    sent: list[ModelRequest] = []
    original = ScriptedProvider.stream

    def spy(self: ScriptedProvider, request: ModelRequest) -> AsyncIterator[StreamItem]:
        sent.append(request)
        return original(self, request)

    monkeypatch.setattr(ScriptedProvider, "stream", spy)
    outcome = await send(facade, workspace, "Summarise big.txt")
    assert outcome.failure is None and outcome.reply == "I read it."
    trace = await last_trace(facade)
    tokenizer = TokenizerRegistry().get(trace.tokenizer)
    assert len(sent) == 2
    for request in sent:
        assert tokenizer.count_messages(request.messages) <= trace.budget
    [tool] = [i for i in trace.items if i.source_name == "tool"]
    assert tool.included and tool.truncated and tool.dropped_tokens  # cut visibly, in the trace
    assert "truncated" in sent[1].messages[-1].content
    replayed = await facade.context.replay(SESSION, 1)
    assert [m.content for m in replayed] == [m.content for m in sent[1].messages]
    info = await facade.sessions.get(SESSION)
    log = facade.services.events.read(session_id=info.id)
    [result] = [e.payload for e in log if isinstance(e.payload, ToolInvocationCompleted)]
    assert len(result.result) > 10_000  # the log keeps the whole result
