"""Chat messages: what the assembler produces and what model providers consume."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    name: str
    arguments: str  # JSON text, as providers exchange it


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


class AgentItem(BaseModel):
    """One item of an agent framework's session, kept verbatim: ``item`` is its JSON, and
    ``message`` what Kairox reads of it (None for an item that is no conversation message, such
    as reasoning). ``kind`` names it in the log (``message``, ``function_call``, ...)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    item: str
    kind: str
    message: ChatMessage | None = None


class RecordedItem(BaseModel):
    """An item a session recorded (``AgentItem.item``) and the seq of the event holding it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    seq: int
    item: str


def opening_notes_as_system(messages: tuple[ChatMessage, ...]) -> tuple[ChatMessage, ...]:
    """``messages`` for a provider whose conversation must open with the user (Anthropic; a
    llama.cpp chat template may insist too): an assistant note ahead of the first user message
    (the compaction summary) goes as a system message there, in its place and with its text
    (an untrusted summary keeps its marked tag). Everything else is unchanged."""
    out: list[ChatMessage] = []
    opened = False
    for m in messages:
        opened = opened or m.role in ("user", "tool")
        if not opened and m.role == "assistant" and not m.tool_calls:
            m = ChatMessage(role="system", content=m.content)
        out.append(m)
    return tuple(out)
