"""Kairox: memory, retrieval and context assembly for LLM agents.

The public API is what ``__all__`` lists; everything else may change between releases.
"""

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
