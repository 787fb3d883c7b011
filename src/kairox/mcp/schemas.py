"""The typed inputs and outputs of the MCP tools: every enum and bound lands in the JSON schema.

Scopes and statuses are the core enums (their values are the schema's ``enum``); ``k`` and the
memory body are bounded here, with the body limit every surface shares.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from kairox.core.events import UntrustedInput
from kairox.core.limits import MAX_MEMORY_BODY_CHARS
from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope

MAX_K = 50
"""The most hits one search tool returns."""

Body = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_MEMORY_BODY_CHARS,
        description="The fact, in one or two sentences.",
    ),
]
Key = Annotated[
    str | None,
    Field(
        max_length=200,
        description="A short dotted key (user and workspace memories need one).",
    ),
]
Query = Annotated[str, Field(min_length=1, max_length=2_000, description="What to look for.")]
K = Annotated[int, Field(ge=1, le=MAX_K, description="How many hits to return.")]
MemoryId = Annotated[str, Field(min_length=1, max_length=200, description="A memory id.")]
ScopeName = Literal["session", "user", "workspace"]
"""``MemoryScope``'s values, inline in the schema (a test keeps the two equal)."""
Scope = Annotated[
    ScopeName, Field(description="Whose memory: the session's, the user's or the workspace's.")
]
ScopeFilter = Annotated[
    ScopeName | None, Field(description="Only memories of this scope (default: every scope).")
]
StatusFilter = Literal["pending", "accepted", "rejected", "deleted", "all"]
"""A memory status, or ``all``: the same choice ``kairox memory list --status`` offers."""


def scopes_of(scope: ScopeName | None) -> list[MemoryScope] | None:
    return [MemoryScope.parse(scope)] if scope else None


class ConversationMessage(BaseModel):
    """One message of a conversation handed to ``memory_extract``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    role: Literal["user", "assistant", "tool"] = Field(
        description="Who said it; tool results are untrusted text."
    )
    content: str = Field(max_length=MAX_MEMORY_BODY_CHARS)


Conversation = Annotated[
    list[ConversationMessage],
    Field(min_length=1, max_length=200, description="The conversation, oldest message first."),
]
Profile = Annotated[
    str | None,
    Field(max_length=200, description="The model profile that extracts (default: the session's)."),
]


class ProposedMemory(MemoryRecord):
    """The one memory JSON shape, plus whether the proposal was a duplicate."""

    duplicate: bool = False
    """True when an identical memory or proposal already existed: nothing was written."""


class SearchHit(BaseModel):
    """A workspace or knowledge-base passage (untrusted text: it was written by others)."""

    model_config = ConfigDict(frozen=True)
    source: str
    path: str | None
    start_line: int | None
    end_line: int | None
    score: float
    text: str


class RecalledTurn(BaseModel):
    """An earlier message of this workspace's conversations, brought back by recall."""

    model_config = ConfigDict(frozen=True)
    seq: int
    session: str
    turn: int | None
    role: str
    ts: datetime
    score: float
    text: str


class ContextSourceUse(BaseModel):
    """One source of a context: how many tokens its included items take, and which ones."""

    model_config = ConfigDict(frozen=True)
    source: str
    tokens: int
    items: list[str]


class ContextPreview(BaseModel):
    """What a turn carries (or carried), by source, within its budget."""

    model_config = ConfigDict(frozen=True)
    session: str
    turn: int | None
    model: str
    budget: int
    used: int
    sources: list[ContextSourceUse]


class Taint(BaseModel):
    """The untrusted text this connection has received (it becomes a proposal's provenance)."""

    model_config = ConfigDict(frozen=True)
    untrusted_inputs: tuple[UntrustedInput, ...]
