"""``facade.memory.extract``: proposals from a conversation without a turn, through the same
parser, approval, taint and cap as a reply's, recorded with ``origin: extraction``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kairox.app import AppFacade, ChatMessage
from kairox.core.errors import InvalidInput, ModelError
from kairox.core.events import MemoryProposed
from kairox.core.types import MemoryOrigin, MemoryScope, MemoryStatus
from kairox.services import Services

CONVERSATION = [
    ChatMessage(role="user", content="Hi! My name is Dana and I prefer short answers."),
    ChatMessage(role="assistant", content="Nice to meet you, Dana."),
]


def _facade(home: Path, tmp_path: Path, *lines: dict[str, object]) -> AppFacade:
    path = tmp_path / "extract.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return AppFacade(Services.open(home), model=f"scripted:{path}")


def _proposed(facade: AppFacade) -> list[MemoryProposed]:
    return [
        e.payload
        for e in facade.services.events.read(types=["MemoryProposed"])
        if isinstance(e.payload, MemoryProposed)
    ]


async def test_extract_makes_proposals_never_accepted_memories(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    markers = (
        '<memory scope="user" key="user.name">The user is called Dana</memory>\n'
        '<memory scope="user" key="user.answers">Dana prefers short answers</memory>'
    )
    facade = _facade(kairox_home, tmp_path, {"purpose": "extraction", "text": markers})
    try:
        routed = await facade.memory.extract(CONVERSATION, workspace=workspace)
        assert [(r.record.key, r.record.status) for r in routed] == [
            ("user.name", MemoryStatus.PENDING),
            ("user.answers", MemoryStatus.PENDING),
        ]
        assert {p.origin for p in _proposed(facade)} == {MemoryOrigin.EXTRACTION}
        listed = await facade.memory.list(workspace=workspace, statuses=[MemoryStatus.ACCEPTED])
        assert listed == []
    finally:
        await facade.aclose()
        facade.close()


async def test_extract_without_markers_proposes_nothing(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    facade = _facade(kairox_home, tmp_path, {"purpose": "extraction", "text": "Nothing new."})
    try:
        assert await facade.memory.extract(CONVERSATION, workspace=workspace) == []
        assert _proposed(facade) == []
    finally:
        await facade.aclose()
        facade.close()


async def test_extract_applies_taint_and_the_example_guard(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    markers = (
        '<memory scope="workspace" key="db.engine">This project uses PostgreSQL 17</memory>'
        '<memory scope="user" key="hobby.bagpipes">The user plays the bagpipes.</memory>'
    )
    facade = _facade(kairox_home, tmp_path, {"purpose": "extraction", "text": markers})
    tool_said = [
        *CONVERSATION,
        ChatMessage(role="tool", name="read_file", content="DATABASE=postgres17"),
    ]
    try:
        tainted, copied = await facade.memory.extract(tool_said, workspace=workspace)
        assert tainted.record.status is MemoryStatus.PENDING
        assert [u.kind for u in tainted.record.untrusted_inputs] == ["tool_result"]
        assert copied.record.status is MemoryStatus.REJECTED
        assert "example" in (copied.record.decision_reason or "")
    finally:
        await facade.aclose()
        facade.close()


async def test_extract_session_memory_needs_a_session_and_follows_the_policy(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    marker = '<memory scope="session">We are on the release branch</memory>'
    facade = _facade(
        kairox_home,
        tmp_path,
        {"purpose": "extraction", "text": marker},
        {"purpose": "extraction", "text": marker},
    )
    try:
        assert await facade.memory.extract(CONVERSATION, workspace=workspace) == []
        await facade.chat.open("work", workspace=workspace)
        [routed] = await facade.memory.extract(CONVERSATION, workspace=workspace, session="work")
        assert routed.record.scope is MemoryScope.SESSION
        assert routed.record.status is MemoryStatus.ACCEPTED  # the session policy, like a reply
    finally:
        await facade.aclose()
        facade.close()


async def test_extract_refuses_bad_input_and_reports_a_failed_call(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    facade = _facade(kairox_home, tmp_path, {"purpose": "extraction", "error": "model down"})
    try:
        with pytest.raises(InvalidInput):
            await facade.memory.extract([], workspace=workspace)
        with pytest.raises(ModelError, match="model down"):
            await facade.memory.extract(CONVERSATION, workspace=workspace)
        (workspace / ".kairox").mkdir()
        (workspace / ".kairox" / "config.toml").write_text('[memory]\nextract = "off"\n')
        with pytest.raises(InvalidInput, match="extraction is off"):
            await facade.memory.extract(CONVERSATION, workspace=workspace)
    finally:
        await facade.aclose()
        facade.close()


@pytest.mark.slow
async def test_extract_on_llama_cpp_is_grammar_constrained(
    kairox_home: Path, workspace: Path
) -> None:
    """On the embedded model the extraction call follows the GBNF grammar: whatever it says is
    markers (user or workspace scope, a lowercase key), never free text."""
    facade = AppFacade(Services.open(kairox_home), model="local")
    try:
        routed = await facade.memory.extract(CONVERSATION, workspace=workspace)
    finally:
        await facade.aclose()
        facade.close()
    for r in routed:
        assert r.record.scope in (MemoryScope.USER, MemoryScope.WORKSPACE)
        assert re.fullmatch(r"[a-z][a-z0-9._-]{0,31}", r.record.key or "")
    assert all(p.origin is MemoryOrigin.EXTRACTION for p in _proposed_in(kairox_home))


def _proposed_in(home: Path) -> list[MemoryProposed]:
    services = Services.open(home)
    try:
        return [
            e.payload
            for e in services.events.read(types=["MemoryProposed"])
            if isinstance(e.payload, MemoryProposed)
        ]
    finally:
        services.close()
