"""Kairox: memory, retrieval and context assembly for LLM agents.

The public API is what ``__all__`` lists: ``Memory`` / ``AsyncMemory`` (the library API),
``AppFacade`` (everything the CLI and the other surfaces do), ``ModelProvider`` (bring your own
model; register a spec prefix with ``kairox.models.register``), the record and event types, and
the error tree rooted at ``KairoxError``. Everything else stays importable from its module
(``kairox.memory.MarkerStream``, ``kairox.context.assembler.ContextAssembler``, ...) but may change
between releases. Names load on first use, so ``import kairox`` (and every CLI command) starts
without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kairox.api import (
        AsyncMemory,
        Memory,
    )
    from kairox.app import (
        AppFacade,
    )
    from kairox.core.errors import (
        AppendOnlyViolation,
        ConfigError,
        ContextOverflow,
        InvalidInput,
        KairoxError,
        MemoryDecisionError,
        MissingExtra,
        ModelError,
        NotFound,
        RetrievalError,
        SessionArchivedError,
        SessionBusy,
        StoreError,
    )
    from kairox.core.events import (
        AssistantMessageCompleted,
        CompactionSummary,
        ContextAssembled,
        ContextCompactionCompleted,
        ContextCompactionFailed,
        ContextCompactionSkipped,
        ContextCompactionStarted,
        EventPayload,
        MemoryAccepted,
        MemoryDeleted,
        MemoryEdited,
        MemoryMarkerRejected,
        MemoryProposed,
        MemoryRejected,
        MemoryRestored,
        ModelCallStarted,
        ModelTokenDelta,
        ProfileSwitched,
        SessionArchived,
        SessionStarted,
        SessionUnarchived,
        StoredEvent,
        ToolInvocationCompleted,
        TraceItem,
        TurnFailed,
        UntrustedInput,
        Usage,
        UserMessageAdded,
    )
    from kairox.core.messages import (
        ChatMessage,
    )
    from kairox.core.outcomes import (
        AssembledContext,
        CompactionResult,
        TurnOutcome,
    )
    from kairox.core.records import (
        MemoryHit,
        MemoryRecord,
        MemoryVersion,
    )
    from kairox.core.types import (
        MemoryScope,
        MemoryStatus,
    )
    from kairox.models.base import (
        ModelProvider,
    )
    from kairox.store.records import SessionInfo

_MODULE_OF = {
    "AppFacade": "kairox.app",
    "AppendOnlyViolation": "kairox.core.errors",
    "AssembledContext": "kairox.core.outcomes",
    "AssistantMessageCompleted": "kairox.core.events",
    "AsyncMemory": "kairox.api",
    "ChatMessage": "kairox.core.messages",
    "CompactionResult": "kairox.core.outcomes",
    "CompactionSummary": "kairox.core.events",
    "ConfigError": "kairox.core.errors",
    "ContextAssembled": "kairox.core.events",
    "ContextCompactionCompleted": "kairox.core.events",
    "ContextCompactionFailed": "kairox.core.events",
    "ContextCompactionSkipped": "kairox.core.events",
    "ContextCompactionStarted": "kairox.core.events",
    "ContextOverflow": "kairox.core.errors",
    "EventPayload": "kairox.core.events",
    "InvalidInput": "kairox.core.errors",
    "KairoxError": "kairox.core.errors",
    "Memory": "kairox.api",
    "MemoryAccepted": "kairox.core.events",
    "MemoryDecisionError": "kairox.core.errors",
    "MemoryDeleted": "kairox.core.events",
    "MemoryEdited": "kairox.core.events",
    "MemoryMarkerRejected": "kairox.core.events",
    "MemoryProposed": "kairox.core.events",
    "MemoryHit": "kairox.core.records",
    "MemoryRecord": "kairox.core.records",
    "MemoryRejected": "kairox.core.events",
    "MemoryRestored": "kairox.core.events",
    "MemoryScope": "kairox.core.types",
    "MemoryStatus": "kairox.core.types",
    "MemoryVersion": "kairox.core.records",
    "MissingExtra": "kairox.core.errors",
    "ModelCallStarted": "kairox.core.events",
    "ModelError": "kairox.core.errors",
    "ModelProvider": "kairox.models.base",
    "ModelTokenDelta": "kairox.core.events",
    "NotFound": "kairox.core.errors",
    "ProfileSwitched": "kairox.core.events",
    "RetrievalError": "kairox.core.errors",
    "SessionArchived": "kairox.core.events",
    "SessionArchivedError": "kairox.core.errors",
    "SessionBusy": "kairox.core.errors",
    "SessionInfo": "kairox.store.records",
    "SessionStarted": "kairox.core.events",
    "SessionUnarchived": "kairox.core.events",
    "StoreError": "kairox.core.errors",
    "StoredEvent": "kairox.core.events",
    "ToolInvocationCompleted": "kairox.core.events",
    "TraceItem": "kairox.core.events",
    "TurnFailed": "kairox.core.events",
    "TurnOutcome": "kairox.core.outcomes",
    "UntrustedInput": "kairox.core.events",
    "Usage": "kairox.core.events",
    "UserMessageAdded": "kairox.core.events",
}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'kairox' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AppFacade",
    "AppendOnlyViolation",
    "AssembledContext",
    "AssistantMessageCompleted",
    "AsyncMemory",
    "ChatMessage",
    "CompactionResult",
    "CompactionSummary",
    "ConfigError",
    "ContextAssembled",
    "ContextCompactionCompleted",
    "ContextCompactionFailed",
    "ContextCompactionSkipped",
    "ContextCompactionStarted",
    "ContextOverflow",
    "EventPayload",
    "InvalidInput",
    "KairoxError",
    "Memory",
    "MemoryAccepted",
    "MemoryDecisionError",
    "MemoryDeleted",
    "MemoryEdited",
    "MemoryHit",
    "MemoryMarkerRejected",
    "MemoryProposed",
    "MemoryRecord",
    "MemoryRejected",
    "MemoryRestored",
    "MemoryScope",
    "MemoryStatus",
    "MemoryVersion",
    "MissingExtra",
    "ModelCallStarted",
    "ModelError",
    "ModelProvider",
    "ModelTokenDelta",
    "NotFound",
    "ProfileSwitched",
    "RetrievalError",
    "SessionArchived",
    "SessionArchivedError",
    "SessionBusy",
    "SessionInfo",
    "SessionStarted",
    "SessionUnarchived",
    "StoreError",
    "StoredEvent",
    "ToolInvocationCompleted",
    "TraceItem",
    "TurnFailed",
    "TurnOutcome",
    "UntrustedInput",
    "Usage",
    "UserMessageAdded",
]
