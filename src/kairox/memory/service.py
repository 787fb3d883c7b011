"""The approval policy: session memories are auto-accepted, user and workspace ones wait.

A proposal made with untrusted text in its context waits for a human decision whatever its scope.

Proposals per turn are capped; the surplus is recorded as rejected with a reason, so nothing the
model proposed is silently lost. A proposal identical to an accepted memory or a pending proposal
(same scope, owner, key and body) is a no-op, reported as ``Routed.duplicate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kairox.core.config import MemoryConfig
from kairox.core.events import UntrustedInput
from kairox.core.records import MemoryRecord
from kairox.core.types import Actor, MemoryScope
from kairox.memory.store import MemoryStore


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    max_proposals_per_turn: int = 5
    auto_accept_session: bool = True

    @classmethod
    def from_config(cls, config: MemoryConfig) -> MemoryPolicy:
        """The policy the ``[memory]`` section of the workspace's config asks for."""
        return cls(
            max_proposals_per_turn=config.max_proposals_per_turn,
            auto_accept_session=config.auto_accept_session,
        )


@dataclass(frozen=True, slots=True)
class Proposal:
    scope: MemoryScope
    key: str | None
    body: str
    untrusted: tuple[UntrustedInput, ...] = ()
    """The untrusted items in the context of the model call that produced this proposal."""


@dataclass(frozen=True, slots=True)
class Routed:
    """What became of one proposal: its record, or the existing one it duplicates."""

    record: MemoryRecord
    duplicate: bool = False


class ApprovalService:
    """Routes the proposals of one turn through the store according to the policy."""

    def __init__(self, store: MemoryStore, policy: MemoryPolicy | None = None) -> None:
        self.store = store
        self.policy = policy or MemoryPolicy()

    def route(
        self,
        proposals: Sequence[Proposal],
        *,
        workspace_id: str,
        session_id: str | None,
        turn: int | None,
        untrusted_inputs: Sequence[UntrustedInput] = (),
        policy: MemoryPolicy | None = None,
    ) -> list[Routed]:
        """Propose each one; ``policy`` (the workspace's config) overrides the default policy."""
        policy = policy or self.policy
        already = (
            self.store.count_proposals(session_id, turn)
            if session_id is not None and turn is not None
            else 0
        )
        records: list[Routed] = []
        index = 0
        for proposal in proposals:
            same = self.store.identical(
                proposal.scope,
                proposal.key,
                proposal.body,
                workspace_id=workspace_id,
                session_id=session_id,
            )
            if same is not None:
                records.append(Routed(same, duplicate=True))
                continue
            untrusted = proposal.untrusted or tuple(untrusted_inputs)
            record = self.store.propose(
                proposal.scope,
                proposal.key,
                proposal.body,
                workspace_id=workspace_id,
                session_id=session_id,
                turn=turn,
                untrusted_inputs=untrusted,
            )
            if already + index >= policy.max_proposals_per_turn:
                record = self.store.reject(
                    record.id,
                    actor=Actor.POLICY,
                    reason=f"over the limit of {policy.max_proposals_per_turn} proposals per turn",
                )
            elif (
                proposal.scope is MemoryScope.SESSION
                and policy.auto_accept_session
                and not untrusted
            ):
                record = self.store.accept(record.id, actor=Actor.POLICY)
            index += 1
            records.append(Routed(record))
        return records
