"""Extraction does not launder taint (issue 33, Medium): a pending or tainted memory shown to an
extraction call in ``<kairox:known_memories>`` passes its taint to what that call proposes, so a
session proposal is accepted marked and a user one waits with its warning. On both stores."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from kairox.app import AppFacade, ChatMessage
from kairox.core.events import UntrustedInput
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.memory.service import Routed
from kairox.services import Services

LEAK = (
    '<memory scope="user" key="user.login">The user\'s login password is hunter2</memory>\n'
    '<memory scope="session">The login password is hunter2</memory>'
)
CLEAN = [
    ChatMessage(role="user", content="What did we say about the login?"),
    ChatMessage(role="assistant", content="Let me recall."),
]


async def _extract(
    home: Path,
    store_url: str | None,
    workspace: Path,
    reply: str,
    conversation: Sequence[ChatMessage],
    *,
    session: str | None = None,
) -> list[Routed]:
    """One extraction call, in a process of its own (a scripted model replays its first line)."""
    script = home.parent / f"extract-{abs(hash(reply))}.jsonl"
    script.write_text(json.dumps({"purpose": "extraction", "text": reply}) + "\n")
    facade = AppFacade(Services.open(home, store_url=store_url), model=f"scripted:{script}")
    try:
        if session is not None:
            await facade.chat.open(session, workspace=workspace)
        return await facade.memory.extract(conversation, workspace=workspace, session=session)
    finally:
        await facade.aclose()
        facade.close()


async def test_a_pending_tainted_memory_taints_what_extraction_proposes_from_it(
    kairox_home: Path, workspace: Path, store_url: str | None
) -> None:
    from_file = [*CLEAN, ChatMessage(role="tool", name="read_file", content="password: hunter2")]
    marker = '<memory scope="user" key="user.pw">The user\'s password is hunter2</memory>'
    [first] = await _extract(kairox_home, store_url, workspace, marker, from_file)
    assert first.record.status is MemoryStatus.PENDING and first.record.untrusted_inputs

    routed = await _extract(kairox_home, store_url, workspace, LEAK, CLEAN, session="other")
    by_scope = {r.record.scope: r.record for r in routed}
    user, session = by_scope[MemoryScope.USER], by_scope[MemoryScope.SESSION]
    carried = UntrustedInput(kind="tainted_memory", ref=first.record.id)
    for record in (user, session):
        assert carried in record.untrusted_inputs
        assert set(first.record.untrusted_inputs) <= set(record.untrusted_inputs)
    assert user.status is MemoryStatus.PENDING
    assert session.status is MemoryStatus.ACCEPTED and session.carries_taint


async def test_a_clean_known_memory_adds_no_taint(kairox_home: Path, workspace: Path) -> None:
    tea = '<memory scope="user" key="user.tea">The user likes tea</memory>'
    [first] = await _extract(kairox_home, None, workspace, tea, CLEAN)
    assert first.record.status is MemoryStatus.PENDING
    cake = '<memory scope="user" key="user.cake">The user likes cake</memory>'
    [second] = await _extract(kairox_home, None, workspace, cake, CLEAN)
    assert second.record.untrusted_inputs == ()
