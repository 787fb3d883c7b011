"""The memory service decides first, then writes a proposal and its verdict in one transaction
(on both stores): a verdict that cannot be written leaves no proposal behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kairox.core.records import MemoryView
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.memory.service import MemoryPolicy, Proposal, Verdict
from kairox.services import Services


@pytest.fixture
def services(kairox_home: Path, store_url: str | None) -> Iterator[Services]:
    opened = Services.open(kairox_home, store_url=store_url)
    yield opened
    opened.close()


def test_the_policy_decides_before_anything_is_written() -> None:
    policy = MemoryPolicy(max_proposals_per_turn=1)
    fact = Proposal(MemoryScope.SESSION, None, "The build uses uv.")
    assert policy.decide(fact, (), earlier=0) == Verdict("accept")
    assert policy.decide(fact, (), earlier=1) == Verdict(
        "reject", "over the limit of 1 proposals per turn"
    )
    user = Proposal(MemoryScope.USER, "editor.font", "JetBrains Mono")
    assert policy.decide(user, (), earlier=0) == Verdict("wait")


def test_a_refusal_that_fails_to_write_leaves_no_pending_proposal(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = services.sessions.ensure_workspace("/tmp/kairox-ws")
    service = services.approval
    policy = MemoryPolicy(max_proposals_per_turn=0)  # every proposal is over the limit

    def broken_reject(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(services.memories, "reject", broken_reject)
    with pytest.raises(RuntimeError, match="disk full"):
        service.route(
            [Proposal(MemoryScope.USER, "editor.font", "JetBrains Mono")],
            workspace_id=ws,
            session_id=None,
            turn=None,
            policy=policy,
        )
    monkeypatch.undo()
    view = MemoryView(workspace_id=ws, session_id=None)
    assert services.memories.list(view, statuses=list(MemoryStatus)) == []
    assert [e.type for e in services.events.read() if e.type.startswith("Memory")] == []


def test_a_refusal_is_still_a_proposal_and_its_rejection(services: Services) -> None:
    ws = services.sessions.ensure_workspace("/tmp/kairox-ws")
    (routed,) = services.approval.route(
        [Proposal(MemoryScope.USER, "editor.font", "JetBrains Mono")],
        workspace_id=ws,
        session_id=None,
        turn=None,
        policy=MemoryPolicy(max_proposals_per_turn=0),
    )
    assert routed.record.status is MemoryStatus.REJECTED
    assert routed.record.decision_reason == "over the limit of 0 proposals per turn"
    kinds = [e.type for e in services.events.read() if e.type.startswith("Memory")]
    assert kinds == ["MemoryProposed", "MemoryRejected"]
