"""Knowledge bases: one module per kind, and a registry that maps a config ``kind`` to its class.

Backends import lazily, so a missing optional dependency (tantivy) only matters to the kind that
needs it. Every knowledge base is a ``WorkspaceRetriever`` named ``kb:<id>``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, assert_never, runtime_checkable

from kairox.core.kb_config import (
    BedrockConfig,
    KnowledgeBaseConfig,
    PineconeConfig,
    SqliteFtsConfig,
    TantivyConfig,
    WeaviateConfig,
)
from kairox.retrieval.types import RetrievalHit

if TYPE_CHECKING:
    from kairox.retrieval.knowledge_bases._documents import Document


class KnowledgeBase(Protocol):
    """A knowledge base is a retrieval source: ``name == "kb:<id>"``."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]: ...


@runtime_checkable
class LocalKnowledgeBase(Protocol):
    """A knowledge base Kairox loads itself (``kairox kb add``). Both methods block."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]: ...

    def add_documents(self, paths: Sequence[Path]) -> AddReport: ...

    def count(self) -> int: ...


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class AddReport:
    """What ``add_documents`` did. A re-added file with the same content counts as unchanged."""

    source: str
    added: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    passages: int = 0
    """Passages written by this call (new and replaced documents)."""
    documents: int = 0
    """Documents in the knowledge base after the call."""


StoreOutcome = Literal["added", "replaced", "unchanged"]


def load_each(
    paths: Sequence[Path], store: Callable[[Document], StoreOutcome], *, source: str
) -> AddReport:
    """Load every file under ``paths`` and hand each readable one to ``store``, the backend's
    write; tally what happened. ``documents`` is left for the caller to fill in."""
    from kairox.retrieval.knowledge_bases._documents import Unreadable, expand_paths, load_document

    done: dict[StoreOutcome, list[str]] = {"added": [], "replaced": [], "unchanged": []}
    skipped: list[SkippedFile] = []
    passages = 0
    for item in expand_paths(paths):
        loaded = item if isinstance(item, Unreadable) else load_document(item)
        if isinstance(loaded, Unreadable):
            skipped.append(SkippedFile(loaded.path, loaded.reason))
            continue
        outcome = store(loaded)
        done[outcome].append(loaded.path)
        if outcome != "unchanged":
            passages += len(loaded.passages)
    return AddReport(
        source=source,
        added=tuple(done["added"]),
        replaced=tuple(done["replaced"]),
        unchanged=tuple(done["unchanged"]),
        skipped=tuple(skipped),
        passages=passages,
    )


def create_knowledge_base(
    kb_id: str,
    config: KnowledgeBaseConfig,
    *,
    env: Mapping[str, str] = os.environ,
) -> KnowledgeBase:
    """Build the knowledge base a config describes.

    Secrets are read from ``env`` at query time, so a missing variable fails that source's
    search with a message naming the variable, not the whole load. The remote kinds talk through
    their vendor's SDK (an extra each), imported on the first search.
    """
    if isinstance(config, SqliteFtsConfig):
        from kairox.retrieval.knowledge_bases.sqlite_fts import SqliteFtsKnowledgeBase

        return SqliteFtsKnowledgeBase(kb_id, config)
    if isinstance(config, TantivyConfig):
        from kairox.retrieval.knowledge_bases.tantivy import TantivyKnowledgeBase

        return TantivyKnowledgeBase(kb_id, config)
    if isinstance(config, PineconeConfig):
        from kairox.retrieval.knowledge_bases.pinecone import PineconeKnowledgeBase

        return PineconeKnowledgeBase(kb_id, config, env=env)
    if isinstance(config, WeaviateConfig):
        from kairox.retrieval.knowledge_bases.weaviate import WeaviateKnowledgeBase

        return WeaviateKnowledgeBase(kb_id, config, env=env)
    if isinstance(config, BedrockConfig):
        from kairox.retrieval.knowledge_bases.bedrock import BedrockKnowledgeBase

        return BedrockKnowledgeBase(kb_id, config, env=env)
    assert_never(config)


__all__ = [
    "AddReport",
    "KnowledgeBase",
    "LocalKnowledgeBase",
    "SkippedFile",
    "create_knowledge_base",
]
