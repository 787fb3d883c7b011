"""Request and response models of the web API, so the OpenAPI schema says exactly what flows.

Facade types that are already pydantic models (memory records, versions, events, context traces)
are used as they are; the rest get a small typed model here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from kairox.app import TransferFormat
from kairox.core.events import CompactionSummary, StoredEvent, Usage
from kairox.core.outcomes import CompactionOutcome, CompactionResult
from kairox.core.records import MAX_BODY_CHARS, MAX_IMPORT_CHARS, MemoryRecord
from kairox.core.types import SessionState

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Body = Annotated[str, StringConstraints(min_length=1, max_length=MAX_BODY_CHARS)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RecallHitOut(_Model):
    """A recalled event: where and when it was said, by whom, and a snippet."""

    seq: int
    session: str
    turn: int | None
    role: str
    speaker: str
    time: str
    score: float
    snippet: str


class RecallOut(_Model):
    query: str
    scope: Literal["session", "workspace"]
    indexed: int
    floor: float
    below_floor: int
    hits: list[RecallHitOut]


class ErrorOut(_Model):
    """Every error the API returns: one line saying what happened and what to do."""

    error: str


class InfoOut(_Model):
    workspace: str
    workspace_id: str
    version: str


class ProfileOut(_Model):
    alias: str
    model: str


class ProfilesOut(_Model):
    default: str
    profiles: list[ProfileOut]


class _SessionLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def workspace_id(self) -> str: ...
    @property
    def workspace_path(self) -> str: ...
    @property
    def profile(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def started_seq(self) -> int: ...
    @property
    def archived(self) -> bool: ...
    @property
    def answered_by(self) -> str | None: ...


class SessionOut(_Model):
    id: str
    name: str
    workspace_id: str
    workspace_path: str
    profile: str
    created_at: datetime
    started_seq: int
    archived: bool = False
    answered_by: str | None = None
    """The model that answered the latest turn (in the session list; null before a reply)."""

    @classmethod
    def of(cls, info: _SessionLike) -> SessionOut:
        return cls(
            id=info.id,
            name=info.name,
            workspace_id=info.workspace_id,
            workspace_path=info.workspace_path,
            profile=info.profile,
            created_at=info.created_at,
            started_seq=info.started_seq,
            archived=info.archived,
            answered_by=info.answered_by,
        )


class SessionCreate(_Model):
    name: Name
    profile: Name | None = None

    @field_validator("name")
    @classmethod
    def _addressable(cls, name: str) -> str:
        if "/" in name:
            raise ValueError("a session name cannot contain '/' (it is part of the URL)")
        return name


class StateOut(_Model):
    state: SessionState
    queued: int


class MessageIn(_Model):
    text: Body


class ProfileSwitchIn(_Model):
    alias: Name


class CompactOut(_Model):
    """``queued`` when a turn or other command was running: it runs right after it.
    ``completed``: it ran, and ``outcome`` says what it did (``summarised``, ``fallback``,
    ``skipped`` or ``failed``, with ``reason`` for the last three), the same fields as
    ``kairox compact --json``.

    ``state`` is what the session was doing when the request arrived.
    """

    status: Literal["queued", "completed"]
    state: SessionState
    outcome: CompactionOutcome | None = None
    reason: str | None = None
    from_seq: int | None = None
    to_seq: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None

    @classmethod
    def ran(cls, result: CompactionResult, *, state: SessionState) -> CompactOut:
        return cls(
            status="completed",
            state=state,
            outcome=result.outcome,
            reason=result.reason,
            from_seq=result.from_seq,
            to_seq=result.to_seq,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
        )


class CancelOut(_Model):
    cancelled: bool


class _OutcomeLike(Protocol):
    """What ``TurnOutcomeOut`` reads from the facade's turn outcome."""

    @property
    def turn(self) -> int: ...
    @property
    def reply(self) -> str: ...
    @property
    def proposals(self) -> Sequence[MemoryRecord]: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def failure(self) -> str | None: ...


class TurnOutcomeOut(_Model):
    """The data of the final ``done`` event of a streamed turn."""

    turn: int
    reply: str
    proposals: list[MemoryRecord]
    usage: Usage
    failure: str | None

    @classmethod
    def of(cls, outcome: _OutcomeLike) -> TurnOutcomeOut:
        return cls(
            turn=outcome.turn,
            reply=outcome.reply,
            proposals=list(outcome.proposals),
            usage=outcome.usage,
            failure=outcome.failure,
        )


class UndoableIn(_Model):
    ids: Annotated[list[str], Field(max_length=10_000)]


class UndoableOut(_Model):
    """The ids (of those asked about) whose latest edit, replacement or delete undo reverts."""

    ids: list[str]


class ApproveIn(_Model):
    body: Body | None = Field(default=None, description="Approve with this body instead.")


class RejectIn(_Model):
    reason: Annotated[str, StringConstraints(min_length=1, max_length=1000)] = (
        "rejected by the user"
    )


class EditIn(_Model):
    body: Body


class ExportOut(_Model):
    format: TransferFormat
    filename: str
    content: str


class ImportIn(_Model):
    format: TransferFormat
    content: Annotated[str, StringConstraints(max_length=MAX_IMPORT_CHARS)]


class ItemTextOut(_Model):
    """One item of a turn's assembly expanded to the text the model was sent."""

    turn: int
    ref: str
    text: str


class SummaryOut(_Model):
    """A compaction summary and the range of events (by seq) it stands in for."""

    seq: int
    ts: datetime
    from_seq: int
    to_seq: int
    text: str
    model: str
    tokens_before: int
    tokens_after: int
    fallback: bool

    @classmethod
    def of(cls, event: StoredEvent) -> SummaryOut:
        payload = event.payload
        assert isinstance(payload, CompactionSummary)
        return cls(
            seq=event.seq,
            ts=event.ts,
            from_seq=payload.from_seq,
            to_seq=payload.to_seq,
            text=payload.text,
            model=payload.model,
            tokens_before=payload.tokens_before,
            tokens_after=payload.tokens_after,
            fallback=payload.fallback,
        )


class LastSeqOut(_Model):
    last_seq: int


__all__ = [
    "ApproveIn",
    "CancelOut",
    "CompactOut",
    "EditIn",
    "ErrorOut",
    "ExportOut",
    "ImportIn",
    "InfoOut",
    "LastSeqOut",
    "MessageIn",
    "ProfileOut",
    "ProfileSwitchIn",
    "ProfilesOut",
    "RejectIn",
    "SessionCreate",
    "SessionOut",
    "StateOut",
    "SummaryOut",
    "TurnOutcomeOut",
]
