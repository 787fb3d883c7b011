"""How the chat screen reads log events: which memories an event touches, and the one-line
texts it puts in the chat stream and the notice bar for tools and compaction.

Kept apart from the screen so these rules are plain functions, easy to test and to reuse.
"""

from __future__ import annotations

from kairox.core.events import (
    CompactionSummary,
    ContextCompactionCompleted,
    ContextCompactionFailed,
    ContextCompactionSkipped,
    ContextCompactionStarted,
    EventPayload,
    MemoryAccepted,
    ProfileSwitched,
    StoredEvent,
    ToolInvocationCompleted,
    TurnFailed,
)
from kairox.tui.notices import Level

MEMORY_EVENTS = (
    "MemoryProposed",
    "MemoryAccepted",
    "MemoryRejected",
    "MemoryEdited",
    "MemoryDeleted",
    "MemoryRestored",
)
QUEUED_COMPACTION = "compaction queued: it runs when the current turn ends"
RUNNING_COMPACTION = "compacting…"


def memory_ids_of(event: StoredEvent) -> set[str]:
    """The memory ids a memory event touches (a replacement touches two)."""
    payload = event.payload
    ids: set[str] = set()
    memory_id = getattr(payload, "memory_id", None)
    if isinstance(memory_id, str):
        ids.add(memory_id)
    if isinstance(payload, MemoryAccepted) and payload.replaced_memory_id:
        ids.add(payload.replaced_memory_id)
    return ids


def tool_line(call: ToolInvocationCompleted) -> str:
    args = " ".join(call.arguments.split())
    args = args if len(args) <= 60 else args[:59] + "…"
    status = " failed" if call.is_error else ""
    return f"⚙ {call.name} {args}{status}"


def summary_line(summary: CompactionSummary) -> str:
    kind = "fallback summary" if summary.fallback else "summary"
    return (
        f"— earlier history compacted into a {kind} "
        f"({summary.tokens_before:,} → {summary.tokens_after:,} tokens) —"
    )


def failure_line(failure: TurnFailed) -> str:
    return f"turn {failure.turn} failed: {failure.reason}"


def profile_line(switch: ProfileSwitched) -> str:
    return f"— profile switched: {switch.from_profile} → {switch.to_profile} —"


def compaction_notice(payload: EventPayload) -> tuple[str, Level] | None:
    """The notice a compaction event puts up, or None for other events."""
    match payload:
        case ContextCompactionStarted():
            return f"compacting ({payload.trigger})…", "info"
        case ContextCompactionCompleted():
            return "compaction completed", "info"
        case ContextCompactionFailed():
            return f"compaction failed: {payload.reason}", "error"
        case ContextCompactionSkipped():
            return f"compaction skipped: {payload.reason}", "warning"
        case _:
            return None
