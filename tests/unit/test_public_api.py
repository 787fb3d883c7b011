"""Guards the public API: removing or renaming a name here is a breaking change.

The top level is what a library user needs: the library API, the facade, the provider
protocol, the record and event types, and the error tree. Internals stay in their modules.
"""

import importlib

import pytest

import kairox

EXPECTED = {
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
    "MemoryMarkerRejected",
    "MemoryProposed",
    "MemoryHit",
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
}

INTERNALS = {
    "AssemblyInput": "kairox.context.assembler",
    "Budget": "kairox.context.windows",
    "ContextAssembler": "kairox.context.assembler",
    "MarkerStream": "kairox.memory",
    "MemoryMarker": "kairox.memory",
    "MemoryStore": "kairox.memory",
    "ParseResult": "kairox.memory",
    "Quotas": "kairox.context.assembler",
    "RejectedMarker": "kairox.memory",
    "Tokenizer": "kairox.context.tokens",
    "TokenizerRegistry": "kairox.context.tokens",
    "extract_memory_markers": "kairox.memory",
    "parse_memory_markers": "kairox.memory",
    "resolve_window": "kairox.context.windows",
    "strip_memory_markers": "kairox.memory",
}


def test_public_api_is_exactly_the_curated_list() -> None:
    assert set(kairox.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(kairox, name) is not None


def test_the_library_api_and_the_provider_protocol_are_at_the_top() -> None:
    from kairox.api import AsyncMemory, Memory
    from kairox.models.base import ModelProvider

    assert kairox.Memory is Memory
    assert kairox.AsyncMemory is AsyncMemory
    assert kairox.ModelProvider is ModelProvider


@pytest.mark.parametrize(("name", "module"), sorted(INTERNALS.items()))
def test_internals_left_the_top_level_but_stay_importable(name: str, module: str) -> None:
    assert name not in kairox.__all__
    with pytest.raises(AttributeError):
        getattr(kairox, name)
    assert getattr(importlib.import_module(module), name) is not None


def test_every_error_derives_from_the_root() -> None:
    errors = [
        obj
        for obj in (getattr(kairox, name) for name in EXPECTED)
        if isinstance(obj, type) and issubclass(obj, Exception)
    ]
    assert len(errors) >= 13
    for error in errors:
        assert issubclass(error, kairox.KairoxError)
