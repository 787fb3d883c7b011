"""The memory service: every rule about what becomes a memory, over the ``MemoryStore``.

The approval policy: session memories are auto-accepted, user and workspace ones wait.

A session proposal made with untrusted text in its context is accepted and keeps its taint
(``session_after_untrusted = "accept"``, the default: a session memory dies with its session), or
waits for a human decision (``"ask"``). User and workspace proposals always wait, and a tainted
session memory in context taints them in turn, so its text never reaches a longer-lived scope
without a decision made with the taint in view.

Proposals per turn are capped, and a proposal copied from the example markers of the system
prompt (a small model echoing its instructions) is never accepted; both are recorded as rejected
with a reason, so nothing the model proposed is silently lost. A proposal identical to an accepted
memory or a pending proposal (same scope, owner, key and body) is a no-op, reported as
``Routed.duplicate``. The policy decides first; the proposal and its verdict are then written in
one transaction.

Besides the approval: an agent's change or delete of a memory (``update``, ``forget``), the
user's own direct write (``write``), which memories a view sees (``in_view``, ``belongs``), and
how a memory search merges substring matches with ranked ones (``search``). The facade
(``kairox.app.memory``) resolves names and configs and delegates here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal, Protocol

from kairox.core.errors import InvalidInput
from kairox.core.events import UntrustedInput
from kairox.core.names import check_name
from kairox.core.records import MAX_BODY_CHARS, MemoryHit, MemoryRecord, MemoryView
from kairox.core.types import Actor, MemoryOrigin, MemoryScope, MemoryStatus
from kairox.memory.markers import extract_memory_markers
from kairox.memory.protocol import GENERAL_PROMPT_TEXTS
from kairox.store.protocols import MemoryStore
from kairox.store.words import normalise, phrase_pattern

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

    def decide(
        self, proposal: Proposal, untrusted: Sequence[UntrustedInput], *, earlier: int
    ) -> Verdict:
        """What becomes of a new proposal, ``earlier`` proposals of its turn having been made."""
        copied = copied_from_examples(proposal, self.example_texts)
        if copied is not None:
            return Verdict("reject", copied)
        if earlier >= self.max_proposals_per_turn:
            return Verdict(
                "reject", f"over the limit of {self.max_proposals_per_turn} proposals per turn"
            )
        if proposal.scope is MemoryScope.SESSION and self.accepts_session(untrusted):
            return Verdict("accept")
        return Verdict("wait")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The policy's decision on a proposal: accepted, rejected (with the reason), or left
    pending for a person."""

    action: Literal["accept", "reject", "wait"]
    reason: str = ""


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


class Ranked(Protocol):
    """A memory search index's hit (``kairox.retrieval.memory_index``)."""

    @property
    def memory_id(self) -> str: ...
    @property
    def score(self) -> float: ...


Rank = Callable[[str, str, int], Sequence[Ranked]]
"""``rank(query, workspace_id, k)``: the memory index's hits, best first."""


class MemoryService:
    """The memory rules of one home, over its ``MemoryStore``; ``policy`` is the default approval
    policy (a workspace's config passes its own to ``route``)."""

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
        """Propose each one; ``policy`` (the workspace's config) overrides the default policy.
        Each proposal and its verdict are one transaction."""
        policy = policy or self.policy
        already = (
            self.store.count_proposals(session_id, turn)
            if session_id is not None and turn is not None
            else 0
        )
        records: list[Routed] = []
        index = 0
        for proposal in proposals:
            untrusted = proposal.untrusted or tuple(untrusted_inputs)
            verdict = policy.decide(proposal, untrusted, earlier=already + index)
            with self.store.atomic():
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
                if verdict.action == "reject":
                    record = self.store.reject(record.id, actor=Actor.POLICY, reason=verdict.reason)
                elif verdict.action == "accept":
                    record = self.store.accept(record.id, actor=Actor.POLICY)
            index += 1
            records.append(Routed(record))
        return records

    def write(
        self, view: MemoryView, scope: MemoryScope, key: str | None, body: str
    ) -> MemoryRecord:
        """The user's own memory, written directly: proposed and accepted by the user in one
        transaction (no policy applies). One that already says exactly this comes back as it is
        (a pending one is accepted); a key that holds another body gets a new version."""
        memories = self.store
        ws, session = view.workspace_id, view.session_id
        with memories.atomic():
            record = memories.identical(
                scope, key, body, workspace_id=ws, session_id=session
            ) or memories.propose(scope, key, body, workspace_id=ws, session_id=session)
            if record.status is MemoryStatus.PENDING:
                record = memories.accept(record.id, actor=Actor.USER)
            return record

    def update(
        self,
        record: MemoryRecord,
        body: str,
        view: MemoryView,
        *,
        untrusted: Sequence[UntrustedInput] = (),
        policy: MemoryPolicy | None = None,
    ) -> Routed:
        """A change asked for by an agent, not the user: a session memory's body, or a pending
        proposal's, changes at once (with the taint the change adds); a change to an accepted
        user or workspace memory is a proposal for the same key, which the user decides like a
        new one (approving it makes a new version of the memory)."""
        if record.status in (MemoryStatus.REJECTED, MemoryStatus.DELETED):
            raise InvalidInput(f"memory {record.id} is {record.status.value}; propose a new one")
        if record.scope is MemoryScope.SESSION or record.status is MemoryStatus.PENDING:
            # A pending proposal is still the agent's to word: its row changes (with the taint
            # this change adds), so the key never holds two pending proposals.
            return Routed(
                self.store.edit(record.id, body, actor=Actor.POLICY, untrusted=tuple(untrusted))
            )
        proposal = Proposal(
            record.scope, record.key, body, tuple(untrusted), origin=MemoryOrigin.CLIENT
        )
        return self.route(
            [proposal],
            workspace_id=view.workspace_id,
            session_id=view.session_id,
            turn=None,
            policy=policy,
        )[0]

    def forget(
        self, record: MemoryRecord, view: MemoryView, *, untrusted: Sequence[UntrustedInput] = ()
    ) -> Routed:
        """A delete asked for by an agent: a session memory is deleted at once; deleting a user
        or workspace memory is a proposal the user decides (approving it deletes the memory).
        A second request while one waits returns that one, as a duplicate."""
        if record.scope is MemoryScope.SESSION:
            return Routed(self.store.delete(record.id, actor=Actor.POLICY))
        if record.status is not MemoryStatus.ACCEPTED:
            raise InvalidInput(
                f"memory {record.id} is {record.status.value}: only an accepted memory can be "
                "proposed for deletion"
            )
        pending = self.store.list(view, scopes=[record.scope], statuses=[MemoryStatus.PENDING])
        for earlier in pending:
            if earlier.forget and earlier.key == record.key:
                return Routed(earlier, duplicate=True)
        proposal = self.store.propose(
            record.scope,
            record.key,
            record.body,
            workspace_id=view.workspace_id,
            session_id=view.session_id,
            untrusted_inputs=tuple(untrusted),
            forget=True,
            origin=MemoryOrigin.CLIENT,
        )
        return Routed(proposal)

    def search(
        self,
        query: str,
        view: MemoryView,
        *,
        rank: Rank,
        floor: float,
        k: int | None,
        scopes: Sequence[MemoryScope] | None,
        statuses: Sequence[MemoryStatus] | None,
        all_sessions: bool,
    ) -> list[MemoryHit]:
        """Memories of ``view`` matching ``query``: those whose key or body holds it as typed
        (whole words, or CJK characters in a row: ``phrase_pattern``) first, score 1.0 in
        ``rank``'s order, then ``rank``'s hits at or above ``floor``; ``k`` None returns every
        match."""
        if not query.strip():
            raise InvalidInput("memory search needs a query: the words to look for")
        needle = query.strip().lower()

        def visible(
            *, ids: Sequence[str] | None = None, text: str | None = None, newest: int | None = None
        ) -> list[MemoryRecord]:
            """The memories in view (of ``ids``, or holding ``text``)."""
            return self.store.list(
                view,
                scopes=scopes,
                statuses=statuses,
                all_sessions=all_sessions,
                text=text,
                newest=newest,
                ids=ids,
            )

        # Ranked a batch at a time, never every memory: the index ranks the user's and the
        # workspace's memories, and only the ranked ones are read to narrow them to the view.
        depth = 2 * k + 10 if k is not None else None
        while True:
            ranked = rank(query, view.workspace_id, depth if depth is not None else 1 << 40)
            by_id = {r.id: r for r in visible(ids=[h.memory_id for h in ranked])}
            shown = [h for h in ranked if h.memory_id in by_id and h.score >= floor]
            if depth is None or k is None or len(shown) >= k or len(ranked) < depth:
                break
            depth *= 4
        # Those holding the query itself come first (score 1.0), in ranked order.
        order = {hit.memory_id: i for i, hit in enumerate(ranked)}
        # The ranked ones holding it; when the ranked ones do not fill ``k``, also the newest
        # of those whose text holds it that the index did not rank (a scan of every memory,
        # narrowed by the phrase rule below).
        holding = list(by_id.values())
        if k is None or len(shown) < k:
            holding += visible(text=needle, newest=k)
        # "As typed" means whole words (``CI`` is not in ``city``) or CJK characters in a row.
        phrase = phrase_pattern(query)
        contains = {
            r.id: r
            for r in holding
            if phrase is not None
            and (phrase.search(normalise(r.body)) or phrase.search(normalise(r.key or "")))
        }
        ranked_contains = sorted(contains.values(), key=lambda r: order.get(r.id, len(order)))
        hits = [MemoryHit(record=r, score=1.0) for r in ranked_contains]
        seen = set(contains)
        for hit in shown:
            record = by_id[hit.memory_id]
            if record.id in seen:
                continue
            seen.add(record.id)
            hits.append(MemoryHit(record=record, score=hit.score))
        return hits if k is None else hits[:k]


ApprovalService = MemoryService
"""The name this service had while it only routed proposals."""


def new_memory(
    scope: MemoryScope, key: str | None, body: str, *, has_session: bool
) -> tuple[str | None, str]:
    """The key and body of a memory a person writes (``add``): the body trimmed and checked, a
    user or workspace memory without a key given one derived from its body."""
    text = body.strip()
    if not text:
        raise InvalidInput("a memory body cannot be empty")
    if len(text) > MAX_BODY_CHARS:
        raise InvalidInput(f"a memory body has at most {MAX_BODY_CHARS} characters")
    if scope is MemoryScope.SESSION and not has_session:
        raise InvalidInput("session memory needs a session; name one with session=NAME")
    if key is None and scope is not MemoryScope.SESSION:
        key = derived_key(text)
    if key is not None:
        check_name(key, what="a memory key")
    return key, text


def derived_key(body: str) -> str:
    """A key for a memory written without one: its first words and a digest of the body, so
    two different bodies never share a key (and never replace each other) by accident."""
    words = re.findall(r"[a-z0-9]+", body.lower())[:6]
    slug = "-".join(words)[:48].rstrip("-") or "note"
    return f"{slug}-{hashlib.sha256(body.encode('utf-8')).hexdigest()[:8]}"


def belongs(record: MemoryRecord, workspace_id: str) -> bool:
    """A user memory is everyone's; a workspace or session memory is its workspace's."""
    return record.scope is MemoryScope.USER or record.workspace_id == workspace_id


def in_view(record: MemoryRecord, view: MemoryView) -> bool:
    """Whether ``view`` sees ``record``: the user's (when it includes them), its workspace's,
    its session's (or, without a session, every session's of its workspace)."""
    if record.scope is MemoryScope.USER:
        return view.include_user
    if record.scope is MemoryScope.WORKSPACE:
        return record.workspace_id == view.workspace_id
    return record.session_id == view.session_id or (
        view.session_id is None and record.workspace_id == view.workspace_id
    )


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
