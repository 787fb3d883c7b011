"""The retrieval sources of a session: its workspace index, the configured knowledge bases (each
bound to the profiles allowed to see it) and the history index. Indexes are kept per workspace
(the history index per embedder), so their vector matrices stay loaded between turns."""

from __future__ import annotations

from pathlib import Path

from kairox.core.config_load import LoadedConfig
from kairox.retrieval.composite import SourceBinding
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.history import HistoryIndex
from kairox.retrieval.knowledge_bases import KnowledgeBase, create_knowledge_base
from kairox.retrieval.types import RetrievalHit
from kairox.retrieval.workspace import WorkspaceRagIndex
from kairox.runtime.recall import SessionRecall
from kairox.runtime.services import Services
from kairox.runtime.tools import SearchFn
from kairox.store.sessions import SessionInfo


class SourceCache:
    def __init__(self, services: Services) -> None:
        self.services = services
        self._indexes: dict[tuple[Path, str], WorkspaceRagIndex] = {}
        self._kbs: dict[tuple[str, str], KnowledgeBase] = {}
        self._histories: dict[str, HistoryIndex] = {}

    def history_index(self, embedder: str) -> HistoryIndex:
        """The history index searched with ``embedder`` (the workspace index's choice)."""
        if embedder not in self._histories:
            self._histories[embedder] = HistoryIndex(
                self.services.db, self.services.events, create_embedder(embedder)
            )
        return self._histories[embedder]

    def session_recall(self, loaded: LoadedConfig, session: SessionInfo) -> SessionRecall:
        index = self.history_index(loaded.config.retrieval.embedder)
        return SessionRecall(
            index,
            loaded.config.recall,
            workspace_id=session.workspace_id,
            session_id=session.id,
        )

    def workspace_index(self, root: Path, embedder: str) -> WorkspaceRagIndex:
        key = (root.resolve(), embedder)
        if key not in self._indexes:
            self._indexes[key] = WorkspaceRagIndex(
                self.services.db, root, embedder=create_embedder(embedder)
            )
        return self._indexes[key]

    def bindings(
        self, loaded: LoadedConfig, workspace: Path
    ) -> tuple[list[SourceBinding], SearchFn | None]:
        retrieval = loaded.config.retrieval
        bindings: list[SourceBinding] = []
        search_fn: SearchFn | None = None
        if retrieval.workspace_index and retrieval.k > 0:
            index = self.workspace_index(workspace, retrieval.embedder)
            bindings.append(SourceBinding(retriever=index, k=retrieval.k))

            async def search(query: str) -> list[RetrievalHit]:
                return await index.search(query, k=retrieval.k)

            search_fn = search
        for kb_id, kb_config in loaded.knowledge_bases.items():
            if not kb_config.enabled:
                continue
            cache_key = (kb_id, kb_config.model_dump_json())
            if cache_key not in self._kbs:
                self._kbs[cache_key] = create_knowledge_base(kb_id, kb_config)
            bindings.append(
                SourceBinding(
                    retriever=self._kbs[cache_key],
                    k=kb_config.max_results,
                    profile_aliases=tuple(kb_config.profile_aliases),
                )
            )
        return bindings, search_fn
