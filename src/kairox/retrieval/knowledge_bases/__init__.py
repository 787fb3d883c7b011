"""Knowledge bases: one module per kind, and a registry that maps a config ``kind`` to a factory.

Backends import lazily, so a missing optional dependency (tantivy) only matters to the kind that
needs it. Every knowledge base is a ``WorkspaceRetriever`` named ``kb:<id>``. ``register`` adds
a kind of your own (its config model is validated at load like a built-in one); installed
packages provide kinds through the ``kairox.knowledge_bases`` entry points
(``kairox.core.plugins``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from kairox.core.errors import ConfigError
from kairox.core.kb_config import (
    BedrockConfig,
    KnowledgeBaseConfig,
    KnowledgeBaseSettings,
    PineconeConfig,
    SqliteFtsConfig,
    TantivyConfig,
    WeaviateConfig,
    register_kind,
)
from kairox.core.plugins import KNOWLEDGE_BASES, failure_note
from kairox.core.registry import Registry
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


KnowledgeBaseFactory = Callable[[str, KnowledgeBaseConfig, Mapping[str, str]], KnowledgeBase]
"""Builds a knowledge base from its id, its validated config (the model its kind registered)
and the environment its secrets are read from (at query time)."""


@dataclass(frozen=True, slots=True)
class KnowledgeBaseKind:
    """One registered kind. ``loadable``: ``kairox kb add`` loads documents into it (the factory
    returns a ``LocalKnowledgeBase``)."""

    kind: str
    factory: KnowledgeBaseFactory
    loadable: bool = False


_KINDS: Registry[KnowledgeBaseKind] = Registry("knowledge-base kind", plugins=KNOWLEDGE_BASES)


def register(
    kind: str,
    factory: KnowledgeBaseFactory,
    *,
    config: type[KnowledgeBaseSettings] = KnowledgeBaseSettings,
    loadable: bool = False,
    replace: bool = False,
) -> None:
    """Make ``kind = "<kind>"`` a knowledge base everywhere one is configured: the config is
    validated by ``config`` (a ``KnowledgeBaseSettings`` subclass with the kind's settings) and
    ``factory`` builds it. Taking a kind that exists without ``replace=True`` is a
    ``ValueError``."""
    register_kind(kind, config, replace=replace)
    _KINDS.add(kind, KnowledgeBaseKind(kind, factory, loadable), replace=True)


def kind_of(kind: str) -> KnowledgeBaseKind:
    """The registered kind (looking through the installed plugins on a miss)."""
    found = _KINDS.get(kind)
    if found is None:
        raise ConfigError(
            f"no knowledge-base backend is registered for kind '{kind}'"
            + failure_note(KNOWLEDGE_BASES),
            key="knowledge_bases",
            fix="install the plugin that provides it, or use " + ", ".join(_KINDS.names()),
        )
    return found


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
    return kind_of(config.kind).factory(kb_id, config, env)


# -- the built-in kinds, each imported only when a config names it ----------------------------


def _sqlite_fts(kb_id: str, config: KnowledgeBaseConfig, env: Mapping[str, str]) -> KnowledgeBase:
    from kairox.retrieval.knowledge_bases.sqlite_fts import SqliteFtsKnowledgeBase

    assert isinstance(config, SqliteFtsConfig)
    return SqliteFtsKnowledgeBase(kb_id, config)


def _tantivy(kb_id: str, config: KnowledgeBaseConfig, env: Mapping[str, str]) -> KnowledgeBase:
    from kairox.retrieval.knowledge_bases.tantivy import TantivyKnowledgeBase

    assert isinstance(config, TantivyConfig)
    return TantivyKnowledgeBase(kb_id, config)


def _pinecone(kb_id: str, config: KnowledgeBaseConfig, env: Mapping[str, str]) -> KnowledgeBase:
    from kairox.retrieval.knowledge_bases.pinecone import PineconeKnowledgeBase

    assert isinstance(config, PineconeConfig)
    return PineconeKnowledgeBase(kb_id, config, env=env)


def _weaviate(kb_id: str, config: KnowledgeBaseConfig, env: Mapping[str, str]) -> KnowledgeBase:
    from kairox.retrieval.knowledge_bases.weaviate import WeaviateKnowledgeBase

    assert isinstance(config, WeaviateConfig)
    return WeaviateKnowledgeBase(kb_id, config, env=env)


def _bedrock(kb_id: str, config: KnowledgeBaseConfig, env: Mapping[str, str]) -> KnowledgeBase:
    from kairox.retrieval.knowledge_bases.bedrock import BedrockKnowledgeBase

    assert isinstance(config, BedrockConfig)
    return BedrockKnowledgeBase(kb_id, config, env=env)


# The config models of the built-in kinds are registered with them in ``kairox.core.kb_config``.
register("sqlite_fts", _sqlite_fts, config=SqliteFtsConfig, loadable=True, replace=True)
register("tantivy", _tantivy, config=TantivyConfig, loadable=True, replace=True)
register("pinecone", _pinecone, config=PineconeConfig, replace=True)
register("weaviate", _weaviate, config=WeaviateConfig, replace=True)
register("bedrock", _bedrock, config=BedrockConfig, replace=True)


__all__ = [
    "AddReport",
    "KnowledgeBase",
    "KnowledgeBaseFactory",
    "KnowledgeBaseKind",
    "KnowledgeBaseSettings",
    "LocalKnowledgeBase",
    "SkippedFile",
    "create_knowledge_base",
    "kind_of",
    "register",
]
