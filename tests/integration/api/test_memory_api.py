"""``kairox.Memory`` and ``kairox.AsyncMemory`` (issue 24): the five-line memory API, on both
stores, through the same facade (and so the same store and log) as the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kairox import AppFacade, AsyncMemory, InvalidInput, Memory, MemoryScope, MemoryStatus
from kairox.core.types import ContextSource
from kairox.models.scripted import ScriptedProvider, ScriptLine

MINILM = "sentence-transformers:all-MiniLM-L6-v2"  # ships in the embeddings extra, offline


@pytest.fixture
def store(on_store: str | None) -> str | None:
    return on_store


def no_index(workspace: Path) -> None:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("[retrieval]\nworkspace_index = false\n")


def test_add_get_update_history_delete(store: str | None, workspace: Path) -> None:
    with Memory(workspace=workspace) as memory:
        tea = memory.add("The user drinks green tea", scope="user", key="drink")
        assert (tea.status, tea.scope, tea.key) == (
            MemoryStatus.ACCEPTED,
            MemoryScope.USER,
            "drink",
        )
        assert memory.get(tea.id).body == "The user drinks green tea"
        same_key = memory.add("The user drinks black tea", scope="user", key="drink")
        assert same_key.id == tea.id and same_key.version == tea.version + 1  # one fact per key
        updated = memory.update(tea.id, "The user drinks green tea with lemon")
        assert updated.version == tea.version + 2
        assert [v.body for v in memory.history(tea.id)][-1] == updated.body
        assert [r.id for r in memory.get_all(scope="user")] == [tea.id]
        assert memory.delete(tea.id).status is MemoryStatus.DELETED
        assert memory.get_all() == []
        assert [r.id for r in memory.get_all(status="deleted")] == [tea.id]


def test_propose_waits_for_approve_or_reject(store: str | None, workspace: Path) -> None:
    with Memory(workspace=workspace) as memory:
        first = memory.add("Deploys go out on Fridays", scope="workspace", propose=True)
        second = memory.add("Tabs, not spaces", scope="workspace", propose=True)
        assert {first.status, second.status} == {MemoryStatus.PENDING}
        assert memory.approve(first.id).status is MemoryStatus.ACCEPTED
        rejected = memory.reject(second.id, reason="not true")
        assert (rejected.status, rejected.decision_reason) == (MemoryStatus.REJECTED, "not true")
        assert [r.body for r in memory.get_all(status="accepted")] == ["Deploys go out on Fridays"]


def test_session_memories_and_conversations(store: str | None, workspace: Path) -> None:
    with Memory(workspace=workspace, session="planning") as memory:
        note = memory.add(
            [
                {"role": "user", "content": "We ship on the 9th"},
                {"role": "assistant", "content": "Noted: the 9th"},
            ],
            scope="session",
            infer=False,
        )
        assert note.body == "user: We ship on the 9th\nassistant: Noted: the 9th"
        assert note.scope is MemoryScope.SESSION and note.status is MemoryStatus.ACCEPTED
        assert [r.id for r in memory.get_all(scope=MemoryScope.SESSION)] == [note.id]
    with Memory(workspace=workspace) as memory:
        with pytest.raises(InvalidInput, match="session memory needs a session"):
            memory.add("x", scope="session")
        with pytest.raises(InvalidInput, match="needs a role"):
            memory.add([{"role": "robot", "content": "x"}], scope="user")
        with pytest.raises(InvalidInput, match="unknown memory scope 'global'"):
            memory.add("x", scope="global")
        with pytest.raises(InvalidInput, match="cannot be empty"):
            memory.add("   ", scope="user")
        assert memory.get_all() == []  # nothing half-written


def test_the_cli_sees_what_memory_wrote(store: str | None, workspace: Path) -> None:
    """One store and one code path: a memory written by the library is the CLI's too."""
    with Memory(workspace=workspace) as memory:
        record = memory.add("Prefers metric units", scope="user")
    shown = subprocess.run(
        [sys.executable, "-m", "kairox", "memory", "show", record.id, "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=workspace,
        env=os.environ.copy(),
    )
    payload = json.loads(shown.stdout)
    assert (payload["body"], payload["status"], payload["decided_by"]) == (
        "Prefers metric units",
        "accepted",
        "user",
    )


def test_a_closed_memory_says_so(workspace: Path) -> None:
    memory = Memory(workspace=workspace)
    memory.close()
    memory.close()  # twice is harmless
    with pytest.raises(InvalidInput, match="closed"):
        memory.get_all()


async def test_async_memory_and_the_sync_one_inside_a_running_loop(
    store: str | None, workspace: Path
) -> None:
    async with AsyncMemory(workspace=workspace) as memory:
        record = await memory.add("Likes short answers", scope="user")
        assert (await memory.get(record.id)).status is MemoryStatus.ACCEPTED
    with Memory(workspace=workspace) as sync_memory:  # its own loop thread, no clash
        assert [r.id for r in sync_memory.get_all()] == [record.id]


async def test_context_assembles_for_your_own_model_call(
    store: str | None, workspace: Path
) -> None:
    no_index(workspace)
    async with AsyncMemory(workspace=workspace) as memory:
        tea = await memory.add("The user drinks green tea", scope="user")
        pending = await memory.add("The user hates coffee", scope="user", propose=True)
        before = await memory.facade.events.list(workspace=workspace)
        assembled = await memory.context("What should I drink?", model="openai:gpt-4o-mini")
        after = await memory.facade.events.list(workspace=workspace)
        text = "\n".join(m.content for m in assembled.messages)
        assert "green tea" in text and "hates coffee" not in text  # approved memories only
        assert assembled.messages[-1].role == "user"
        assert assembled.messages[-1].content.endswith("What should I drink?")
        assert assembled.as_dicts()[0]["role"] == "system"
        trace = assembled.trace
        assert (trace.model, trace.tokenizer) == ("openai:gpt-4o-mini", "o200k_base")
        assert f"mem:{tea.id}@v{tea.version}" in {i.ref for i in trace.items if i.included}
        assert pending.id not in {i.ref.split("@")[0][4:] for i in trace.items}
        assert [e.seq for e in after if e.payload.type != "SessionStarted"] == [
            e.seq for e in before if e.payload.type != "SessionStarted"
        ]  # nothing recorded

        small = await memory.context("What should I drink?", model="openai:gpt-4o-mini", budget=900)
        assert small.trace.budget == 900 and small.trace.used <= 900

        mine = ScriptedProvider([ScriptLine(text="hi")])
        own = await memory.context("hi", model=mine)
        assert own.trace.model == mine.spec
        with pytest.raises(InvalidInput, match="budget must be a positive"):
            await memory.context("hi", model=mine, budget=0)


async def test_memory_wraps_a_facade_you_opened(workspace: Path) -> None:
    facade = AppFacade.open()
    try:
        async with AsyncMemory(workspace=workspace, facade=facade) as memory:
            record = await memory.add("Works in UTC", scope="workspace")
        # the facade is still open and sees the same record
        listed = await facade.memory.list(workspace=workspace)
        assert [r.id for r in listed] == [record.id]
        assert ContextSource.MEMORY.value == "memory"
    finally:
        facade.close()


def test_search_by_meaning(store: str | None, workspace: Path) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text(f'[retrieval]\nembedder = "{MINILM}"\n')
    with Memory(workspace=workspace) as memory:
        db = memory.add("This project uses PostgreSQL 17", scope="workspace", key="db.engine")
        memory.add("The user prefers short answers", scope="user", key="style")
        memory.add("Deploys run on Fridays", scope="workspace", key="deploys")
        hits = memory.search("which database do we use")
        assert hits and hits[0].record.id == db.id and 0 < hits[0].score <= 1
        assert "database" not in db.body.lower() + str(db.key)  # found by meaning, not text
        assert [h.record.key for h in memory.search("short answers", scope="user")] == ["style"]
        assert all(h.record.scope is MemoryScope.USER for h in memory.search("x", scope="user"))
        assert len(memory.search("the", k=1)) <= 1
        with pytest.raises(InvalidInput, match="k must be at least 1"):
            memory.search("x", k=0)


def test_extract_proposes_from_a_conversation(store: str | None, workspace: Path) -> None:
    model = ScriptedProvider(
        [
            ScriptLine(
                purpose="extraction",
                text='<memory scope="user" key="drink">The user drinks green tea</memory>',
            )
        ]
    )
    with Memory(workspace=workspace, model=model) as memory:
        proposals = memory.extract(
            [
                {"role": "user", "content": "I only drink green tea"},
                {"role": "assistant", "content": "Noted."},
            ]
        )
        assert [(p.scope, p.key, p.body, p.status) for p in proposals] == [
            (MemoryScope.USER, "drink", "The user drinks green tea", MemoryStatus.PENDING)
        ]
        assert [r.id for r in memory.get_all(status="pending")] == [proposals[0].id]
