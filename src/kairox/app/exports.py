"""The types the facade's methods take and return, gathered in one light module.

``kairox.app`` re-exports them so a surface needs no import below the facade. Each comes from the
layer that owns it; none of these modules loads the runtime or a model provider.
"""

from __future__ import annotations

from dataclasses import dataclass

from kairox.context.trace_view import bar_chart, trace_json
from kairox.core.config_load import LoadedConfig
from kairox.core.events import CompactionSummary, ContextAssembled, StoredEvent
from kairox.core.messages import ChatMessage
from kairox.core.outcomes import CompactionResult, TurnOutcome
from kairox.memory.transfer import ImportReport, TransferFormat
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
from kairox.store.sessions import SessionInfo


@dataclass(frozen=True)
class TurnDone:
    """The last item of ``facade.chat.send``: the turn's outcome."""

    outcome: TurnOutcome


ChatUpdate = StoredEvent | TurnDone

__all__ = [
    "AddReport",
    "ChatMessage",
    "ChatUpdate",
    "ChunksEmbedded",
    "CompactionResult",
    "CompactionSummary",
    "ContextAssembled",
    "FileProcessed",
    "ImportReport",
    "IndexEvent",
    "IndexReport",
    "KnowledgeBaseInfo",
    "LoadedConfig",
    "ProgressCallback",
    "RetrievalHit",
    "SessionInfo",
    "TransferFormat",
    "TurnDone",
    "TurnOutcome",
    "WalkFinished",
    "bar_chart",
    "trace_json",
]
