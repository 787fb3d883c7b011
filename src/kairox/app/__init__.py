"""The facade package: ``AppFacade`` and every type its methods take or return.

Surfaces import this package (and ``kairox.core``) only, never the runtime or the store; the
rule is an import-linter contract (docs/architecture.md). Each re-exported name loads from the
layer that owns it on first use, so importing the facade stays cheap for a short command.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kairox.app.facade import AppFacade

if TYPE_CHECKING:
    from kairox.app.store import migrate_home
    from kairox.app.updates import (
        LOADING_LABEL,
        WAITING_LABEL,
        ChatUpdate,
        TurnDone,
        waiting_label,
    )
    from kairox.context.trace_view import bar_chart, trace_json
    from kairox.core.config_load import LoadedConfig
    from kairox.core.events import CompactionSummary, ContextAssembled
    from kairox.core.messages import AgentItem, ChatMessage, RecordedItem
    from kairox.core.outcomes import (
        AssembledContext,
        CompactionResult,
        HistoryEntry,
        TurnOutcome,
    )
    from kairox.core.records import MemoryHit
    from kairox.memory.transfer import ImportReport, TransferFormat
    from kairox.models.base import ModelProvider
    from kairox.retrieval.knowledge_bases import AddReport
    from kairox.retrieval.knowledge_bases.service import KnowledgeBaseInfo
    from kairox.retrieval.progress import (
        ChunksEmbedded,
        FileProcessed,
        IndexEvent,
        IndexReport,
        ProgressCallback,
        WalkFinished,
    )
    from kairox.retrieval.types import RetrievalHit
    from kairox.store.records import SessionInfo
    from kairox.store.tokens import TokenInfo

_MODULE_OF = {
    "AddReport": "kairox.retrieval.knowledge_bases",
    "AgentItem": "kairox.core.messages",
    "RecordedItem": "kairox.core.messages",
    "AssembledContext": "kairox.core.outcomes",
    "ChatMessage": "kairox.core.messages",
    "ChatUpdate": "kairox.app.updates",
    "ChunksEmbedded": "kairox.retrieval.progress",
    "CompactionResult": "kairox.core.outcomes",
    "CompactionSummary": "kairox.core.events",
    "ContextAssembled": "kairox.core.events",
    "FileProcessed": "kairox.retrieval.progress",
    "HistoryEntry": "kairox.core.outcomes",
    "ImportReport": "kairox.memory.transfer",
    "IndexEvent": "kairox.retrieval.progress",
    "IndexReport": "kairox.retrieval.progress",
    "KnowledgeBaseInfo": "kairox.retrieval.knowledge_bases.service",
    "LoadedConfig": "kairox.core.config_load",
    "MemoryHit": "kairox.core.records",
    "ModelProvider": "kairox.models.base",
    "ProgressCallback": "kairox.retrieval.progress",
    "RetrievalHit": "kairox.retrieval.types",
    "SessionInfo": "kairox.store.records",
    "TransferFormat": "kairox.memory.transfer",
    "TurnDone": "kairox.app.updates",
    "LOADING_LABEL": "kairox.app.updates",
    "WAITING_LABEL": "kairox.app.updates",
    "waiting_label": "kairox.app.updates",
    "TurnOutcome": "kairox.core.outcomes",
    "WalkFinished": "kairox.retrieval.progress",
    "migrate_home": "kairox.app.store",
    "bar_chart": "kairox.context.trace_view",
    "trace_json": "kairox.context.trace_view",
    "TokenInfo": "kairox.store.tokens",
}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'kairox.app' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "LOADING_LABEL",
    "WAITING_LABEL",
    "AddReport",
    "AgentItem",
    "AppFacade",
    "AssembledContext",
    "ChatMessage",
    "ChatUpdate",
    "ChunksEmbedded",
    "CompactionResult",
    "CompactionSummary",
    "ContextAssembled",
    "FileProcessed",
    "HistoryEntry",
    "ImportReport",
    "IndexEvent",
    "IndexReport",
    "KnowledgeBaseInfo",
    "LoadedConfig",
    "MemoryHit",
    "ModelProvider",
    "ProgressCallback",
    "RecordedItem",
    "RetrievalHit",
    "SessionInfo",
    "TokenInfo",
    "TransferFormat",
    "TurnDone",
    "TurnOutcome",
    "WalkFinished",
    "bar_chart",
    "migrate_home",
    "trace_json",
    "waiting_label",
]
