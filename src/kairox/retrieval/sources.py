"""The retrieval sources of a session: its workspace index, the configured knowledge bases (each
bound to the profiles allowed to see it) and the history index (recall). One cache per process
(the facade builds it and shares it with the runtime), so each index's vector matrix is loaded once
and stays loaded."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.core.config_load import LoadedConfig
from kairox.retrieval.composite import SourceBinding
from kairox.retrieval.types import RetrievalHit

if TYPE_CHECKING:  # the indexes and their numpy matrices load on first use, not with the facade
    from kairox.retrieval.embeddings.base import EmbeddingBackend
    from kairox.retrieval.file_policy import FilePolicy
    from kairox.retrieval.history import EventReader, HistoryIndex
    from kairox.retrieval.knowledge_bases import KnowledgeBase
    from kairox.retrieval.memory_index import MemoryIndex, RecordReader
    from kairox.retrieval.workspace import WorkspaceRagIndex
    from kairox.store.protocols import ChunkStore, HistoryStore, MemoryIndexStore

SearchFn = Callable[[str], Awaitable[list[RetrievalHit]]]
HistorySource = Callable[[], "tuple[HistoryStore, EventReader]"]
MemorySource = Callable[[], "tuple[MemoryIndexStore, RecordReader]"]


class SourceCache:
    def __init__(
        self,
        chunks: Callable[[], ChunkStore],
        history: HistorySource,
        memories: MemorySource | None = None,
    ) -> None:
        self._chunks = chunks  # the store's chunk table, opened on first use (it loads NumPy)
        self._history = history  # the history index's store and the log it indexes
        self._memory = memories  # the memory index's store and the memory store it re-reads
        self._indexes: dict[tuple[Path, str, FilePolicy], WorkspaceRagIndex] = {}
        self._kbs: dict[tuple[str, str], KnowledgeBase] = {}
        self._histories: dict[str, HistoryIndex] = {}
        self._memory_indexes: dict[str, MemoryIndex] = {}
        self._embedders: dict[str, EmbeddingBackend] = {}

    def embedder(self, spec: str) -> EmbeddingBackend:
        """One embedder per spec, shared by the indexes that use it (one model in memory)."""
        if spec not in self._embedders:
            from kairox.retrieval.embeddings import create_embedder

            self._embedders[spec] = create_embedder(spec)
        return self._embedders[spec]

    def history_index(self, embedder: str) -> HistoryIndex:
        """The history index searched with ``embedder`` (the workspace index's choice)."""
        if embedder not in self._histories:
            from kairox.retrieval.history import HistoryIndex

            store, events = self._history()
            self._histories[embedder] = HistoryIndex(store, events, self.embedder(embedder))
        return self._histories[embedder]

    def memory_index(self, embedder: str) -> MemoryIndex:
        """The memory search index ranked with ``embedder`` (the workspace index's choice)."""
        if embedder not in self._memory_indexes:
            if self._memory is None:
                raise ValueError("this source cache was built without a memory store")
            from kairox.retrieval.memory_index import MemoryIndex

            store, records = self._memory()
            events = self._history()[1]
            self._memory_indexes[embedder] = MemoryIndex(
                store, events, records, self.embedder(embedder)
            )
        return self._memory_indexes[embedder]

    def workspace_index(self, root: Path, loaded: LoadedConfig) -> WorkspaceRagIndex:
        """The index of ``root`` as its config asks: its embedder, and the workspace's one file
        policy (a changed denylist or trust gets an index that applies it)."""
        from kairox.retrieval.file_policy import FilePolicy

        embedder = loaded.config.retrieval.embedder
        policy = FilePolicy.for_config(loaded)
        key = (root.resolve(), embedder, policy)
        if key not in self._indexes:
            from kairox.retrieval.workspace import WorkspaceRagIndex

            self._indexes[key] = WorkspaceRagIndex(
                self._chunks(), root, embedder=self.embedder(embedder), policy=policy
            )
        return self._indexes[key]

    def bindings(
        self, loaded: LoadedConfig, workspace: Path
    ) -> tuple[list[SourceBinding], SearchFn | None]:
        retrieval = loaded.config.retrieval
        bindings: list[SourceBinding] = []
        search_fn: SearchFn | None = None
        if retrieval.workspace_index and retrieval.k > 0:
            index = self.workspace_index(workspace, loaded)
            bindings.append(SourceBinding(retriever=index, k=retrieval.k))

            async def search(query: str) -> list[RetrievalHit]:
                return await index.search(query, k=retrieval.k)

            search_fn = search
        for kb_id, kb_config in loaded.knowledge_bases.items():
            if not kb_config.enabled:
                continue
            cache_key = (kb_id, kb_config.model_dump_json())
            if cache_key not in self._kbs:
                from kairox.retrieval.knowledge_bases import create_knowledge_base

                self._kbs[cache_key] = create_knowledge_base(kb_id, kb_config)
            bindings.append(
                SourceBinding(
                    retriever=self._kbs[cache_key],
                    k=kb_config.max_results,
                    profile_aliases=tuple(kb_config.profile_aliases),
                )
            )
        return bindings, search_fn
