"""Read models shared across layers: memory records, their versions and ownership.

``MemoryRecord`` is also the one JSON shape of a memory: the CLI (``--json``), the web API and the
MCP server all emit ``record.to_json()`` (FastAPI and the MCP SDK serialise the model the same
way), so a script sees the same keys whichever surface it asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from kairox.core.errors import InvalidInput
from kairox.core.events import UntrustedInput
from kairox.core.limits import MAX_MEMORY_BODY_CHARS
from kairox.core.types import Actor, MemoryScope, MemoryStatus

USER_OWNER = "user"
MAX_BODY_CHARS = MAX_MEMORY_BODY_CHARS
"""The longest memory body any surface accepts: web, MCP, CLI edit and import (``check_body``;
the one figure lives in ``kairox.core.limits``)."""
MAX_IMPORT_CHARS = 5_000_000
"""The longest memory import document a request may carry (the web's import endpoint)."""
MAX_REQUEST_BYTES = 4 * MAX_IMPORT_CHARS + 1024 * 1024
"""The largest HTTP request body the web server reads; a larger one is refused (413) before
any of it is buffered. It fits an import of ``MAX_IMPORT_CHARS`` characters in UTF-8."""


def check_body(body: str) -> str:
    """A memory body every surface accepts: not empty, at most ``MAX_BODY_CHARS`` characters."""
    if not body.strip():
        raise InvalidInput("a memory body cannot be empty")
    if len(body) > MAX_BODY_CHARS:
        raise InvalidInput(
            f"a memory body has at most {MAX_BODY_CHARS} characters; this one has {len(body)}"
        )
    return body


class _JsonRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready values: enums by value, times in ISO 8601, tuples as lists."""
        return self.model_dump(mode="json")


class MemoryRecord(_JsonRecord):
    id: str
    scope: MemoryScope
    key: str | None
    body: str
    status: MemoryStatus
    version: int
    workspace_id: str | None
    session_id: str | None
    created_at: datetime
    updated_at: datetime
    approved_at: datetime | None
    decided_by: Actor | None
    decision_reason: str | None
    proposed_session_id: str | None
    proposed_turn: int | None
    untrusted_inputs: tuple[UntrustedInput, ...]
    replaces_body: str | None = None
    """For a pending proposal whose key already holds an accepted memory: the body approving
    it would replace (approving makes a new version of that memory)."""
    forget: bool = False
    """A proposal to delete the key's memory: approving it deletes that memory."""

    @property
    def owner(self) -> str:
        return owner_of(self.scope, workspace_id=self.workspace_id, session_id=self.session_id)

    @property
    def carries_taint(self) -> bool:
        """Accepted by the policy with untrusted text in its context (``session_after_untrusted
        = "accept"``): no human vouched for it, so it taints every context it is in."""
        return bool(self.untrusted_inputs) and self.decided_by is Actor.POLICY


class MemoryHit(_JsonRecord):
    """A memory found by ``MemoryArea.search``: the record and its absolute score in [0, 1] (1.0
    for a memory whose key or body contains the query as typed)."""

    record: MemoryRecord
    score: float


class MemoryVersion(_JsonRecord):
    memory_id: str
    version: int
    action: str
    body: str
    status: MemoryStatus
    actor: Actor
    event_seq: int
    changed_at: datetime
    source_memory_id: str | None
    undone: bool
    reason: str | None = None
    """Why it was refused, on a ``reject`` version (the decision's reason); else None."""


@dataclass(frozen=True, slots=True)
class MemoryView:
    """Whose memories a query may see: the user's, one workspace's, and optionally one session's.

    Every memory query takes one of these, so no query can reach another workspace by accident.
    """

    workspace_id: str
    session_id: str | None = None
    include_user: bool = True


@dataclass(frozen=True, slots=True)
class MemoryImport:
    """One memory for ``MemoryStore.import_many``: proposed, then accepted unless ``accept`` is
    False (it stays pending for review)."""

    scope: MemoryScope
    key: str
    body: str
    accept: bool = True
    untrusted_inputs: tuple[UntrustedInput, ...] = ()
    """The provenance a pending memory had where it was exported: it stays marked."""


ImportOutcome = Literal["created", "replaced", "pending", "unchanged"]


@dataclass(frozen=True, slots=True)
class ImportedMemory:
    """What ``import_many`` did with one entry: the memory's id and which kind of change."""

    memory_id: str
    outcome: ImportOutcome


def version_label(version: int, status: MemoryStatus) -> str:
    """``v3``; ``-`` for a proposal, pending or rejected: it is no version of a memory (the
    first acceptance makes v1)."""
    if version <= 0 or status in (MemoryStatus.PENDING, MemoryStatus.REJECTED):
        return "-"
    return f"v{version}"


def owner_of(scope: MemoryScope, *, workspace_id: str | None, session_id: str | None) -> str:
    if scope is MemoryScope.USER:
        return USER_OWNER
    if scope is MemoryScope.WORKSPACE:
        if not workspace_id:
            raise ValueError("workspace memory needs a workspace_id")
        return workspace_id
    if not session_id:
        raise ValueError("session memory needs a session_id")
    return session_id
