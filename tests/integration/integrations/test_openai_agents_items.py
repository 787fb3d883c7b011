"""``KairoxSession`` stores what the Agents SDK gives it and gives it back unchanged (issue 35):
every item type, with its id, status and content parts, system and developer messages
included (and visible in the log); no Kairox persona; the SDK's ``session_settings``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.memory import SessionSettings

from kairox import AppFacade
from kairox.integrations.openai_agents import KairoxSession

ITEMS: list[Any] = [
    {"role": "system", "content": "Answer in French."},
    {"role": "developer", "content": "Never mention prices."},
    {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is in this picture?"},
            {
                "type": "input_image",
                "image_url": "data:image/png;base64,iVBORw0K",
                "detail": "auto",
            },
        ],
    },
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look."}]},
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "describe",
        "arguments": '{"detail": "high"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "a red bicycle"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Un vélo rouge.", "annotations": []}],
    },
]


@pytest.fixture
def session(on_store: str | None, workspace: Path) -> Iterator[KairoxSession]:
    kx = KairoxSession("items", workspace=workspace, model="openai:gpt-4o-mini")
    yield kx
    kx.close()


async def test_every_item_round_trips_exactly(session: KairoxSession, workspace: Path) -> None:
    await session.add_items(ITEMS)
    assert await session.get_items() == ITEMS  # no Kairox system item ahead of them
    assert await session.get_items(limit=3) == ITEMS[-3:]
    assert await session.pop_item() == ITEMS[-1]
    assert await session.pop_item() == ITEMS[-2]
    assert await session.get_items() == ITEMS[:-2]
    facade = AppFacade.open()
    try:
        events = await facade.events.list(session="items", workspace=workspace)
    finally:
        facade.close()
    kept = [
        (e.payload.kind, e.payload.text) for e in events if e.payload.type == "AgentItemRecorded"
    ]
    assert ("message", "Answer in French.") in kept
    assert ("message", "Never mention prices.") in kept  # developer items reach the log
    assert [k for k, _t in kept].count("reasoning") == 1
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None


async def test_session_settings_limit_applies(workspace: Path) -> None:
    kx = KairoxSession("limited", workspace=workspace, session_settings={"limit": 2})
    try:
        assert kx.session_settings == SessionSettings(limit=2)
        await kx.add_items([{"role": "user", "content": str(i)} for i in range(5)])
        assert [i["content"] for i in await kx.get_items()] == ["3", "4"]
        assert len(await kx.get_items(limit=4)) == 4
    finally:
        kx.close()
    with pytest.raises(RuntimeError, match="KairoxSession is closed"):
        await kx.add_items([])
