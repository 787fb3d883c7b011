"""The results the lower layers return and the facade re-exports: a turn's outcome and a
compaction's result.

They live in the foundation so that a surface can name them (``from kairox.app import
TurnOutcome``) without loading the runtime or the compaction engine that produce them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kairox.core.events import ContextAssembled, UntrustedInput, Usage
from kairox.core.messages import ChatMessage
from kairox.core.records import MemoryRecord
from kairox.core.repetition import FinishReason

Trigger = Literal["auto", "manual"]
CompactionOutcome = Literal["summarised", "fallback", "skipped", "failed"]


@dataclass
class TurnOutcome:
    """What one turn did: its number, the visible reply, the proposals it routed, and the
    one-line reason when it failed."""

    turn: int
    reply: str = ""
    proposals: list[MemoryRecord] = field(default_factory=list)
    duplicates: list[MemoryRecord] = field(default_factory=list)
    """Proposals identical to an accepted memory or a pending proposal: nothing was written."""
    usage: Usage = field(default_factory=Usage)
    failure: str | None = None
    finish_reason: FinishReason = "stop"
    """``length`` or ``loop`` when the reply was cut (``finish_note`` says it in one line)."""


@dataclass(frozen=True)
class CompactionResult:
    """What one compaction did; ``summary_seq`` is the appended ``CompactionSummary``.

    ``reason`` says why it skipped or failed, or (for ``fallback``) why the deterministic note
    replaced a model summary."""

    outcome: CompactionOutcome
    trigger: Trigger
    reason: str | None = None
    summary_seq: int | None = None
    from_seq: int | None = None
    to_seq: int | None = None
    tokens_before: int = 0
    tokens_after: int = 0


@dataclass(frozen=True)
class AssembledContext:
    """The context Kairox assembled for a model call of the caller's own: the ``messages`` to
    send, in order, and the ``trace`` that says what each came from and what was left out."""

    messages: tuple[ChatMessage, ...]
    trace: ContextAssembled
    untrusted: tuple[UntrustedInput, ...] = ()
    """The untrusted items in ``messages`` (recalled text, retrieved chunks): hand them back
    with what the model replied (``facade.chat.record``) so its proposals carry them."""
    data: tuple[str, ...] = ()
    """The delimited data blocks among ``messages`` (memories, workspace, knowledge-base and
    recall), for a caller that keeps its own system prompt and history."""

    def as_dicts(self) -> list[dict[str, str]]:
        """The messages as ``{"role": ..., "content": ...}`` dicts, the shape chat APIs take."""
        return [{"role": m.role, "content": m.content} for m in self.messages]


@dataclass(frozen=True)
class HistoryEntry:
    """One unit of a session's history: a message, or a tool call with its result (one
    ``ToolInvocationCompleted``), or a summary standing in for a compacted range. ``seqs`` are
    the events behind it, for ``facade.chat.rewind``."""

    seqs: tuple[int, ...]
    messages: tuple[ChatMessage, ...]
