"""Indexing and search, as the surfaces see them: the workspace index, knowledge bases and the
history index (``recall``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.app.sessions import resolve_in
from kairox.core.aio import blocking
from kairox.core.config_load import ConfigCache, LoadedConfig
from kairox.core.errors import InvalidInput, KairoxError
from kairox.core.ids import workspace_id_for
from kairox.retrieval.composite import CompositeWorkspaceRetriever
from kairox.retrieval.file_policy import FilePolicy
from kairox.retrieval.knowledge_bases import service as kb_service
from kairox.retrieval.sources import SourceCache
from kairox.retrieval.types import RetrievalHit
from kairox.services import Services

if TYPE_CHECKING:  # the indexer (numpy) loads when a command indexes, not at start-up
    from kairox.retrieval.history_hits import HistoryHit
    from kairox.retrieval.knowledge_bases import AddReport
    from kairox.retrieval.knowledge_bases.service import KnowledgeBaseInfo
    from kairox.retrieval.progress import IndexReport, ProgressCallback


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Hits of a history search, and how many events the searched workspace has indexed.
    ``below_floor`` hits had some evidence but scored under ``floor`` (``[retrieval] min_score``):
    they are counted, never returned."""

    hits: tuple[HistoryHit, ...]
    indexed: int
    workspace: str
    session: str | None
    floor: float = 0.0
    below_floor: int = 0

    def text(self) -> str:
        """The hits as a model reads them (the ``recall_history`` tool's text): dated blocks,
        with ``<memory`` neutralised so an old marker never reads as a new one."""
        from kairox.runtime.recall import tool_text

        return tool_text(list(self.hits))


class RetrievalArea:
    def __init__(self, services: Services, configs: ConfigCache, sources: SourceCache) -> None:
        self._s = services
        self._configs = configs
        self._sources = sources

    def _config(self, workspace: Path) -> LoadedConfig:
        return self._configs.get(workspace)

    async def index(
        self, workspace: Path, *, progress: ProgressCallback | None = None
    ) -> IndexReport:
        loaded = await blocking(self._config, workspace)
        index = self._sources.workspace_index(workspace, loaded)
        return await index.index(progress=progress)

    async def search(
        self, query: str, *, workspace: Path, k: int | None = None, profile: str | None = None
    ) -> tuple[list[RetrievalHit], list[str]]:
        """Hybrid search over the workspace index and the knowledge bases the profile sees.
        The workspace index is brought up to date first, as before a turn (a stat scan; only
        changed files are read). Returns the hits and the errors of sources that failed."""
        loaded = await blocking(self._config, workspace)
        errors: list[str] = []
        retrieval = loaded.config.retrieval
        if retrieval.workspace_index and retrieval.k > 0:
            index = self._sources.workspace_index(workspace, loaded)
            try:
                await index.refresh()
            except (KairoxError, OSError) as exc:
                errors.append(f"{index.name}: refresh failed: {exc}")
        bindings, _ = self._sources.bindings(loaded, workspace)
        limit = k if k is not None else loaded.config.retrieval.max_results
        composite = CompositeWorkspaceRetriever(
            bindings, max_results=limit, min_score=loaded.config.retrieval.min_score
        )
        result = await composite.search(query, profile=profile or loaded.config.default_profile)
        errors.extend(f"{e.source}: {e.reason}" for e in result.errors)
        return list(result.hits), errors

    async def kb_list(self, workspace: Path) -> list[KnowledgeBaseInfo]:
        loaded = await blocking(self._config, workspace)
        return await blocking(kb_service.list_knowledge_bases, loaded.knowledge_bases)

    async def kb_add(self, workspace: Path, kb_id: str, paths: Sequence[Path]) -> AddReport:
        loaded = await blocking(self._config, workspace)
        policy = FilePolicy.for_config(loaded)
        return await blocking(
            kb_service.add_documents, kb_id, loaded.knowledge_bases, list(paths), policy
        )

    async def kb_search(
        self, workspace: Path, kb_id: str, query: str, *, k: int | None = None
    ) -> list[RetrievalHit]:
        loaded = await blocking(self._config, workspace)
        return await kb_service.search_knowledge_base(kb_id, loaded.knowledge_bases, query, k)

    async def recall(
        self,
        query: str,
        *,
        session: str | None = None,
        workspace: Path | None = None,
        k: int = 10,
    ) -> RecallResult:
        """Search the conversation history: one session's (a name is resolved in ``workspace``,
        default the current directory), or every session of a workspace. The same search a
        turn's recall runs (never across workspaces)."""
        if not query.strip():
            raise InvalidInput("recall needs a query: the words to look for in the history")
        if k <= 0:
            raise InvalidInput(f"--k must be at least 1, got {k}")
        session_id: str | None = None
        root = (workspace or Path.cwd()).resolve()
        workspace_id = workspace_id_for(root)
        if session is not None:  # its name is resolved in the workspace
            info = await blocking(resolve_in, self._s.sessions, session, root)
            root, workspace_id, session_id = Path(info.workspace_path), info.workspace_id, info.id
        loaded = await blocking(self._config, root)
        index = self._sources.history_index(loaded.config.retrieval.embedder)
        found = await blocking(
            index.search, query, workspace_id=workspace_id, session_id=session_id, k=k
        )
        floor = loaded.config.retrieval.min_score
        hits = tuple(h for h in found if h.score >= floor)
        indexed = await blocking(index.store.unit_count, workspace_id)
        return RecallResult(hits, indexed, str(root), session, floor, len(found) - len(hits))
