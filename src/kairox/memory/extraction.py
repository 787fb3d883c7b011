"""Extraction: one model call that reads a conversation and answers only with ``<memory>`` markers.

For models that ignore the protocol in their replies (``[memory] extract = "after_turn"``) and for
callers with a conversation but no Kairox turn (``facade.memory.extract``). The call sees the
exchange and the memories already known; its markers go through the same parser as a reply's
(``markers``), and the caller routes them through the same approval, taint and per-turn cap.
On llama.cpp the reply is constrained by ``EXTRACTION_GRAMMAR``, so every marker is well-formed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kairox.core.events import UntrustedInput
from kairox.core.messages import ChatMessage
from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.memory.markers import MemoryMarker, ParseResult, parse_memory_markers
from kairox.memory.protocol import EXTRACTION_EXAMPLES, EXTRACTION_PROMPT

MAX_TRANSCRIPT_CHARS = 12_000  # the newest part of a long conversation
MAX_KNOWN = 50  # memories listed as already known
MAX_MARKERS = 3

# Every marker well-formed: user or workspace scope, a dotted lowercase key, a one-line body.
# (Few bounded repetitions: llama.cpp expands ``{m,n}`` into nested rules; a 300-character body
# bound made sampling crawl.)
EXTRACTION_GRAMMAR = r"""
root ::= "none" | marker ("\n" marker)? ("\n" marker)?
marker ::= "<memory scope=\"" scope "\" key=\"" key "\">" body "</memory>"
scope ::= "user" | "workspace"
key ::= [a-z] [a-z0-9._-]{0,31}
body ::= [^<>\n]+
"""

_MARKER = re.compile(r"<(/?)(memory)", re.IGNORECASE)


def _inert(text: str) -> str:
    """``<memory`` in quoted conversation as inert text: quoted words are never a proposal."""
    return _MARKER.sub(r"&lt;\1\2", text)


def extraction_messages(
    conversation: Sequence[ChatMessage], known: Sequence[MemoryRecord]
) -> tuple[ChatMessage, ...]:
    """The extraction call's messages: the instructions, then the known memories and the
    conversation as reference data."""
    lines: list[str] = []
    for message in conversation:
        if message.role == "system" or not message.content.strip():
            continue
        speaker = (
            f"tool {message.name}" if message.role == "tool" and message.name else message.role
        )
        lines.append(f"{speaker}: {_inert(message.content.strip())}")
    transcript = "\n".join(lines)[-MAX_TRANSCRIPT_CHARS:]
    remembered = [
        f"- {m.scope.value}" + (f" {m.key}" if m.key else "") + f": {_inert(m.body)}"
        for m in known[:MAX_KNOWN]
    ]
    examples: list[ChatMessage] = []
    for said, answer in EXTRACTION_EXAMPLES:
        examples.append(ChatMessage(role="user", content=_request([], said)))
        examples.append(ChatMessage(role="assistant", content=answer))
    return (
        ChatMessage(role="system", content=EXTRACTION_PROMPT),
        *examples,
        ChatMessage(role="user", content=_request(remembered, transcript)),
    )


def _request(remembered: Sequence[str], transcript: str) -> str:
    return (
        "<kairox:known_memories>\n"
        + ("\n".join(remembered) if remembered else "(none)")
        + "\n</kairox:known_memories>\n\n<kairox:conversation>\n"
        + transcript
        + "\n</kairox:conversation>\n\nYour markers (or none):"
    )


def parse_extraction(text: str, *, session: bool) -> ParseResult:
    """The markers of an extraction reply (the rest of its text is dropped); session markers
    are kept only when there is a session to hold them."""
    parsed = parse_memory_markers(text)
    kept: list[MemoryMarker] = [
        m for m in parsed.markers if session or m.scope is not MemoryScope.SESSION
    ]
    return ParseResult("", kept[:MAX_MARKERS], parsed.rejected)


def known_taint(known: Sequence[MemoryRecord]) -> tuple[UntrustedInput, ...]:
    """The taint of the memories ``extraction_messages`` shows: a pending proposal or a memory
    accepted with its taint (no human vouched for either) passes on what it carries, so what
    the call proposes from it is marked too."""
    found: list[UntrustedInput] = []
    for memory in known[:MAX_KNOWN]:
        if memory.untrusted_inputs and (
            memory.status is MemoryStatus.PENDING or memory.carries_taint
        ):
            found.append(UntrustedInput(kind="tainted_memory", ref=memory.id))
            found.extend(memory.untrusted_inputs)
    return tuple(dict.fromkeys(found))


def conversation_taint(conversation: Sequence[ChatMessage]) -> tuple[UntrustedInput, ...]:
    """Tool results in the conversation are untrusted text: proposals made from it wait."""
    return tuple(
        UntrustedInput(kind="tool_result", ref=f"message:{i}")
        for i, m in enumerate(conversation)
        if m.role == "tool"
    )
