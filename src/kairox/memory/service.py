"""The approval policy: session memories are auto-accepted, user and workspace ones wait.

A session proposal made with untrusted text in its context is accepted and keeps its taint
(``session_after_untrusted = "accept"``, the default: a session memory dies with its session), or
waits for a human decision (``"ask"``). User and workspace proposals always wait, and a tainted
session memory in context taints them in turn, so its text never reaches a longer-lived scope
without a decision made with the taint in view.

Proposals per turn are capped, and a proposal copied from the example markers of the system
prompt (a small model echoing its instructions) is never accepted; both are recorded as rejected
with a reason, so nothing the model proposed is silently lost. A proposal identical to an accepted
memory or a pending proposal (same scope, owner, key and body) is a no-op, reported as
``Routed.duplicate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

from kairox.core.events import UntrustedInput
from kairox.core.records import MemoryRecord
from kairox.core.types import Actor, MemoryOrigin, MemoryScope
from kairox.memory.markers import extract_memory_markers
from kairox.memory.protocol import GENERAL_PROMPT_TEXTS
from kairox.store.protocols import MemoryStore

if TYPE_CHECKING:  # the config models load with the first config, not with every command
    from kairox.core.config import MemoryConfig

# A body this long found verbatim in a prompt text is an echo of it, not a fact of the user's.
MIN_ECHO_CHARS = 24

SessionAfterUntrusted = Literal["accept", "ask"]


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    max_proposals_per_turn: int = 5
    auto_accept_session: bool = True
    # A tainted session proposal: accepted with its taint shown, or held for approval.
    session_after_untrusted: SessionAfterUntrusted = "accept"
    # The prompt texts that show example markers: a proposal copied from them is rejected (a turn
    # under the local protocol adds it: ``protocol.example_texts``).
    example_texts: tuple[str, ...] = GENERAL_PROMPT_TEXTS

    @classmethod
    def from_config(cls, config: MemoryConfig) -> MemoryPolicy:
        """The policy the ``[memory]`` section of the workspace's config asks for."""
        return cls(
            max_proposals_per_turn=config.max_proposals_per_turn,
            auto_accept_session=config.auto_accept_session,
            session_after_untrusted=config.session_after_untrusted,
        )

    def accepts_session(self, untrusted: Sequence[UntrustedInput]) -> bool:
        """Whether a session proposal with this provenance is accepted without asking."""
        if not self.auto_accept_session:
            return False
        return not untrusted or self.session_after_untrusted == "accept"


@dataclass(frozen=True, slots=True)
class Proposal:
    scope: MemoryScope
    key: str | None
    body: str
    untrusted: tuple[UntrustedInput, ...] = ()
    """The untrusted items in the context of the model call that produced this proposal."""
    origin: MemoryOrigin | None = None


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
                origin=proposal.origin,
            )
            copied = copied_from_examples(proposal, policy.example_texts)
            if copied is not None:
                record = self.store.reject(record.id, actor=Actor.POLICY, reason=copied)
            elif already + index >= policy.max_proposals_per_turn:
                record = self.store.reject(
                    record.id,
                    actor=Actor.POLICY,
                    reason=f"over the limit of {policy.max_proposals_per_turn} proposals per turn",
                )
            elif proposal.scope is MemoryScope.SESSION and policy.accepts_session(untrusted):
                record = self.store.accept(record.id, actor=Actor.POLICY)
            index += 1
            records.append(Routed(record))
        return records


def _flat(text: str) -> str:
    return " ".join(text.split()).lower()


@cache
def _examples(texts: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str], str]:
    markers = [m for text in texts for m in extract_memory_markers(text)]
    keys = frozenset(m.key for m in markers if m.key)
    bodies = frozenset(_flat(m.body) for m in markers)
    return keys, bodies, "\n".join(_flat(t) for t in texts)


def copied_from_examples(proposal: Proposal, texts: tuple[str, ...]) -> str | None:
    """Why ``proposal`` is a copy of the prompt's own examples (their key, their body, or a
    stretch of the prompt text), or None when it is not."""
    if not texts:
        return None
    keys, bodies, flat_texts = _examples(texts)
    body = _flat(proposal.body)
    if proposal.key is not None and proposal.key in keys:
        return f"the key '{proposal.key}' is copied from the system prompt's example"
    if body in bodies:
        return "the body is copied from the system prompt's example"
    if len(body) >= MIN_ECHO_CHARS and body in flat_texts:
        return "the body is copied from the system prompt"
    return None
