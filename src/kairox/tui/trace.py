"""The trace panel: the session's events as they arrive, one line each.

It shows what the log says happened (proposals and decisions, compaction, context assembly,
failures), so the user can see why the model saw what it saw without leaving the chat.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import RichLog

from kairox.core.events import (
    AssistantMessageCompleted,
    CompactionSummary,
    ContextAssembled,
    ContextCompactionCompleted,
    ContextCompactionFailed,
    ContextCompactionSkipped,
    ContextCompactionStarted,
    MemoryAccepted,
    MemoryDeleted,
    MemoryEdited,
    MemoryMarkerRejected,
    MemoryProposed,
    MemoryRejected,
    MemoryRestored,
    ModelCallStarted,
    ProfileSwitched,
    SessionStarted,
    StoredEvent,
    ToolInvocationCompleted,
    TurnFailed,
    UserMessageAdded,
)
from kairox.core.terminal import visible
from kairox.core.types import MemoryScope


def _mem(scope: MemoryScope, key: str | None) -> str:
    return f"{scope.value} {key or '-'}"


def _short(text: str, width: int = 40) -> str:
    flat = visible(" ".join(text.split()), one_line=True)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _tokens(event: StoredEvent) -> str:
    return f" ({event.tokens:,} tok)" if event.tokens else ""


def describe_event(event: StoredEvent) -> str | None:
    """One trace line for ``event``, or None for events the trace leaves out (token deltas)."""
    p = event.payload
    line: str | None
    match p:
        case SessionStarted():
            line = f"SessionStarted {p.name} profile={p.profile}"
        case UserMessageAdded():
            line = f"UserMessageAdded turn {p.turn}{_tokens(event)}"
        case ModelCallStarted():
            line = f"ModelCallStarted {p.purpose} turn {p.turn}"
        case AssistantMessageCompleted():
            line = f"AssistantMessageCompleted turn {p.turn}{_tokens(event)}"
        case ToolInvocationCompleted():
            line = f"ToolInvocationCompleted {p.name}{' error' if p.is_error else ''}"
        case ContextAssembled():
            est = " est." if p.estimated else ""
            line = f"ContextAssembled turn {p.turn}: {p.used:,}/{p.budget:,} tokens{est}"
        case MemoryProposed():
            warn = " [untrusted input]" if p.untrusted_inputs else ""
            line = f"MemoryProposed {_mem(p.scope, p.key)}: {_short(p.body)}{warn}"
        case MemoryAccepted():
            line = f"MemoryAccepted {_mem(p.scope, p.key)} v{p.version} by {p.decided_by.value}"
        case MemoryRejected():
            line = f"MemoryRejected {_mem(p.scope, p.key)}: {_short(p.reason)}"
        case MemoryEdited():
            what = "undo" if p.undo else "edit"
            line = f"MemoryEdited ({what}) v{p.version}: {_short(p.body)}"
        case MemoryDeleted():
            line = f"MemoryDeleted v{p.version} by {p.decided_by.value}"
        case MemoryRestored():
            line = f"MemoryRestored v{p.version} by {p.decided_by.value}"
        case MemoryMarkerRejected():
            line = f"MemoryMarkerRejected: {_short(p.reason, 60)} {_short(p.raw, 30)!r}"
        case ContextCompactionStarted():
            line = f"ContextCompactionStarted ({p.trigger})"
        case CompactionSummary():
            kind = "fallback " if p.fallback else ""
            line = (
                f"CompactionSummary {kind}seq {p.from_seq}-{p.to_seq}: "
                f"{p.tokens_before:,} -> {p.tokens_after:,} tokens"
            )
        case ContextCompactionCompleted():
            line = "ContextCompactionCompleted"
        case ContextCompactionFailed():
            line = f"ContextCompactionFailed: {_short(p.reason, 60)}"
        case ContextCompactionSkipped():
            line = f"ContextCompactionSkipped: {_short(p.reason, 60)}"
        case ProfileSwitched():
            line = f"ProfileSwitched {p.from_profile} -> {p.to_profile}"
        case TurnFailed():
            line = f"TurnFailed turn {p.turn}: {_short(p.reason, 80)}"
        case _:
            line = None
    return line


class TracePanel(RichLog):
    """Append-only trace lines, each wrapped at the panel's edge; hidden until toggled."""

    DEFAULT_CSS = """
    TracePanel {
        width: 45%;
        border-left: vkey $primary;
        padding: 0 1;
        display: none;
        overflow-x: hidden;
    }
    TracePanel.-open { display: block; }
    """

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(highlight=False, markup=False, wrap=True, min_width=8, id=id)
        self.border_title = "trace"
        self._texts: list[str] = []

    def add(self, event: StoredEvent) -> None:
        """Append the event's line (the screen hands it each event once, in seq order)."""
        line = describe_event(event)
        if line is not None:
            self._texts.append(line)
            self.write(Text(line))

    def text_lines(self) -> list[str]:
        """Each trace line whole, as written (the panel shows it wrapped)."""
        return list(self._texts)
