"""Memory: the ``<memory>`` marker protocol, the store protocol, and the memory service with its
approval policy."""

from kairox.core.types import MemoryScope, MemoryStatus
from kairox.memory.markers import (
    MarkerStream,
    MemoryMarker,
    ParseResult,
    RejectedMarker,
    extract_memory_markers,
    parse_memory_markers,
    strip_memory_markers,
)
from kairox.memory.service import ApprovalService, MemoryPolicy, MemoryService, Proposal
from kairox.store.protocols import MemoryStore

__all__ = [
    "ApprovalService",
    "MarkerStream",
    "MemoryMarker",
    "MemoryPolicy",
    "MemoryScope",
    "MemoryService",
    "MemoryStatus",
    "MemoryStore",
    "ParseResult",
    "Proposal",
    "RejectedMarker",
    "extract_memory_markers",
    "parse_memory_markers",
    "strip_memory_markers",
]
