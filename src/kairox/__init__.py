"""Kairox: memory, retrieval and context assembly for LLM agents.

The public API is what ``__all__`` lists; everything else may change between releases. Names
load on first use, so ``import kairox`` (and every CLI command) starts without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kairox.app import AppFacade
    from kairox.context.assembler import AssemblyInput, ContextAssembler, Quotas
    from kairox.context.tokens import Tokenizer, TokenizerRegistry
    from kairox.context.windows import Budget, resolve_window
    from kairox.core.errors import (
        ConfigError,
        ContextOverflow,
        InvalidInput,
        KairoxError,
        MemoryDecisionError,
        MissingExtra,
        ModelError,
        NotFound,
        RetrievalError,
        SessionBusy,
        StoreError,
    )
    from kairox.core.types import MemoryScope, MemoryStatus
    from kairox.memory import (
        MarkerStream,
        MemoryMarker,
        MemoryStore,
        ParseResult,
        RejectedMarker,
        extract_memory_markers,
        parse_memory_markers,
        strip_memory_markers,
    )

_MODULE_OF = {
    "AppFacade": "kairox.app",
    "AssemblyInput": "kairox.context.assembler",
    "Budget": "kairox.context.windows",
    "ConfigError": "kairox.core.errors",
    "ContextAssembler": "kairox.context.assembler",
    "ContextOverflow": "kairox.core.errors",
    "InvalidInput": "kairox.core.errors",
    "KairoxError": "kairox.core.errors",
    "MarkerStream": "kairox.memory",
    "MemoryDecisionError": "kairox.core.errors",
    "MemoryMarker": "kairox.memory",
    "MemoryScope": "kairox.core.types",
    "MemoryStatus": "kairox.core.types",
    "MemoryStore": "kairox.memory",
    "MissingExtra": "kairox.core.errors",
    "ModelError": "kairox.core.errors",
    "NotFound": "kairox.core.errors",
    "ParseResult": "kairox.memory",
    "Quotas": "kairox.context.assembler",
    "RejectedMarker": "kairox.memory",
    "RetrievalError": "kairox.core.errors",
    "SessionBusy": "kairox.core.errors",
    "StoreError": "kairox.core.errors",
    "Tokenizer": "kairox.context.tokens",
    "TokenizerRegistry": "kairox.context.tokens",
    "extract_memory_markers": "kairox.memory",
    "parse_memory_markers": "kairox.memory",
    "resolve_window": "kairox.context.windows",
    "strip_memory_markers": "kairox.memory",
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
    "AssemblyInput",
    "Budget",
    "ConfigError",
    "ContextAssembler",
    "ContextOverflow",
    "InvalidInput",
    "KairoxError",
    "MarkerStream",
    "MemoryDecisionError",
    "MemoryMarker",
    "MemoryScope",
    "MemoryStatus",
    "MemoryStore",
    "MissingExtra",
    "ModelError",
    "NotFound",
    "ParseResult",
    "Quotas",
    "RejectedMarker",
    "RetrievalError",
    "SessionBusy",
    "StoreError",
    "Tokenizer",
    "TokenizerRegistry",
    "extract_memory_markers",
    "parse_memory_markers",
    "resolve_window",
    "strip_memory_markers",
]
