"""The knowledge-base operations the facade and ``kairox kb list|add|search`` call.

Each function takes the validated ``[knowledge_bases]`` configs, builds what it needs, and
closes it again, so surfaces never hold a backend object.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kairox.core.errors import InvalidInput, KairoxError, NotFound
from kairox.core.kb_config import KnowledgeBaseConfig
from kairox.retrieval.composite import SourceBinding
from kairox.retrieval.file_policy import FilePolicy
from kairox.retrieval.knowledge_bases import (
    AddReport,
    KnowledgeBase,
    LocalKnowledgeBase,
    SkippedFile,
    create_knowledge_base,
    kind_of,
)
from kairox.retrieval.knowledge_bases._documents import Unreadable, expand_paths
from kairox.retrieval.types import RetrievalHit


@dataclass(frozen=True, slots=True)
class KnowledgeBaseInfo:
    id: str
    kind: str
    location: str
    """The index path for local kinds, the service address for remote ones."""
    profile_aliases: tuple[str, ...]
    enabled: bool
    max_results: int
    description: str
    documents: int | None
    """Documents loaded (local kinds); None for remote kinds or when it cannot be read."""
    note: str = ""


def list_knowledge_bases(configs: Mapping[str, KnowledgeBaseConfig]) -> list[KnowledgeBaseInfo]:
    """Every configured knowledge base, sorted by id, with document counts where local."""
    infos: list[KnowledgeBaseInfo] = []
    for kb_id in sorted(configs):
        config = configs[kb_id]
        documents: int | None = None
        note = ""
        if kind_of(config.kind).loadable:
            try:
                kb = _local(kb_id, config)
                try:
                    documents = kb.count()
                finally:
                    _close(kb)
            except KairoxError as exc:
                note = str(exc)
        infos.append(
            KnowledgeBaseInfo(
                id=kb_id,
                kind=config.kind,
                location=config.location(),
                profile_aliases=config.profile_aliases,
                enabled=config.enabled,
                max_results=config.max_results,
                description=config.description,
                documents=documents,
                note=note,
            )
        )
    return infos


def add_documents(
    kb_id: str,
    configs: Mapping[str, KnowledgeBaseConfig],
    paths: Sequence[Path],
    policy: FilePolicy | None = None,
) -> AddReport:
    """Load files into a local knowledge base (blocking; run it off the event loop). The
    workspace's file policy picks the files; what it refuses is reported as skipped."""
    config = _config(kb_id, configs)
    if not kind_of(config.kind).loadable:
        raise InvalidInput(
            f"knowledge base '{kb_id}' is a {config.kind} knowledge base; load its documents "
            f"with {config.kind}'s own tools (`kairox kb add` loads sqlite_fts and tantivy)"
        )
    if not paths:
        raise InvalidInput("name at least one file or directory to add")
    files: list[Path] = []
    refused: list[SkippedFile] = []
    for item in expand_paths(paths, policy):
        if isinstance(item, Unreadable):
            refused.append(SkippedFile(item.path, item.reason))
        else:
            files.append(item)
    kb = _local(kb_id, config)
    try:
        report = kb.add_documents(files)
    finally:
        _close(kb)
    return replace(report, skipped=(*refused, *report.skipped))


async def search_knowledge_base(
    kb_id: str,
    configs: Mapping[str, KnowledgeBaseConfig],
    query: str,
    k: int | None = None,
    *,
    env: Mapping[str, str] = os.environ,
) -> list[RetrievalHit]:
    """Search one knowledge base; ``k`` defaults to its ``max_results``."""
    config = _config(kb_id, configs)
    if not config.enabled:
        raise InvalidInput(
            f"knowledge base '{kb_id}' is disabled; set enabled = true in "
            f"[knowledge_bases.{kb_id}] to search it"
        )
    limit = config.max_results if k is None else k
    if limit < 1:
        raise InvalidInput(f"k must be 1 or more, not {limit}")
    kb = create_knowledge_base(kb_id, config, env=env)
    try:
        return await kb.search(query, k=limit)
    finally:
        _close(kb)


def knowledge_base_bindings(
    configs: Mapping[str, KnowledgeBaseConfig],
    *,
    env: Mapping[str, str] = os.environ,
) -> list[SourceBinding]:
    """Composite bindings for every enabled knowledge base: quota = ``max_results``.

    A knowledge base whose backend cannot even be built (a missing extra) is left out here;
    ``list_knowledge_bases`` shows why.
    """
    bindings: list[SourceBinding] = []
    for kb_id in sorted(configs):
        config = configs[kb_id]
        if not config.enabled:
            continue
        try:
            kb = create_knowledge_base(kb_id, config, env=env)
        except KairoxError:
            continue
        bindings.append(
            SourceBinding(
                retriever=kb, k=config.max_results, profile_aliases=config.profile_aliases
            )
        )
    return bindings


def _config(kb_id: str, configs: Mapping[str, KnowledgeBaseConfig]) -> KnowledgeBaseConfig:
    config = configs.get(kb_id)
    if config is None:
        raise NotFound(
            "knowledge base",
            kb_id,
            hint=(
                f"declare it in .kairox/config.toml: [knowledge_bases.{kb_id}] with "
                f'kind = "sqlite_fts" and path = "{kb_id}.db"'
            ),
        )
    return config


def _local(kb_id: str, config: KnowledgeBaseConfig) -> LocalKnowledgeBase:
    kb = create_knowledge_base(kb_id, config)
    assert isinstance(kb, LocalKnowledgeBase)
    return kb


def _close(kb: KnowledgeBase | LocalKnowledgeBase) -> None:
    close = getattr(kb, "close", None)
    if callable(close):
        close()
