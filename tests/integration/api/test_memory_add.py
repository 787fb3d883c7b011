"""``Memory.add`` as mem0 users expect it (issue 35), on both stores: a conversation is read
for facts by the configured model under the approval rules, ``infer=False`` keeps it verbatim,
and ``scope`` defaults to the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairox import AsyncMemory, InvalidInput, Memory, MemoryScope, MemoryStatus
from kairox.models.scripted import ScriptedProvider, ScriptLine

CONVERSATION = [
    {"role": "user", "content": "I'm Dana, I work at Acme and I only drink green tea"},
    {"role": "assistant", "content": "Nice to meet you, Dana."},
]


@pytest.fixture
def store(on_store: str | None) -> str | None:
    return on_store


def extractor() -> ScriptedProvider:
    return ScriptedProvider(
        [
            ScriptLine(
                purpose="extraction",
                text='<memory scope="user" key="employer">The user works at Acme</memory>\n'
                '<memory scope="user" key="drink">The user drinks green tea</memory>',
            )
        ]
    )


def test_a_conversation_is_read_for_facts(store: str | None, workspace: Path) -> None:
    with Memory(workspace=workspace, model=extractor()) as memory:
        facts = memory.add(CONVERSATION)
        assert sorted((f.scope, f.key, f.body, f.status) for f in facts) == [
            (MemoryScope.USER, "drink", "The user drinks green tea", MemoryStatus.PENDING),
            (MemoryScope.USER, "employer", "The user works at Acme", MemoryStatus.PENDING),
        ]  # user facts wait for the user, as every proposal does
        assert not any("user: I'm Dana" in r.body for r in memory.get_all())  # no transcript
        with pytest.raises(InvalidInput, match="infer=False"):
            memory.add(CONVERSATION, key="chat")


def test_infer_false_keeps_the_conversation_verbatim(store: str | None, workspace: Path) -> None:
    with Memory(workspace=workspace) as memory:
        record = memory.add(CONVERSATION, infer=False)
        assert record.body.startswith("user: I'm Dana, I work at Acme")
        assert (record.scope, record.status) == (MemoryScope.USER, MemoryStatus.ACCEPTED)
        assert memory.add("Prefers metric units").scope is MemoryScope.USER  # the default


async def test_the_async_api_reads_a_conversation_too(store: str | None, workspace: Path) -> None:
    async with AsyncMemory(workspace=workspace, model=extractor()) as memory:
        facts = await memory.add(CONVERSATION)
        assert {f.key for f in facts} == {"employer", "drink"}
