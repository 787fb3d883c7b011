"""``WorkspaceRagIndex``: one workspace's RAG index as a ``WorkspaceRetriever`` source.

It ties a root directory to the home's chunk store, an embedder and a ``HybridSearcher`` (which
keeps the vector matrix warm between queries). Blocking work (SQLite, embedding) runs in a worker
thread so the event loop keeps serving while a query or an index run is in progress.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from kairox.core.ids import workspace_id_for
from kairox.retrieval.chunking import ChunkingOptions
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.embeddings.base import EmbeddingBackend
from kairox.retrieval.file_policy import FilePolicy
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.indexer import index_workspace, reembed
from kairox.retrieval.progress import IndexReport, ProgressCallback, ReembedReport
from kairox.retrieval.search import HybridSearcher, SearchHit
from kairox.retrieval.types import RetrievalHit
from kairox.retrieval.walker import DEFAULT_MAX_FILE_BYTES
from kairox.store.protocols import ChunkStore


class WorkspaceRagIndex:
    """The index of one workspace; ``name`` is ``workspace:<resolved path>``."""

    def __init__(
        self,
        store: ChunkStore,
        root: str | os.PathLike[str],
        *,
        embedder: EmbeddingBackend | None = None,
        options: SearchOptions | None = None,
        chunking: ChunkingOptions | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        policy: FilePolicy | None = None,
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        self.workspace_id = workspace_id_for(self.root)
        self._store = store
        self._embedder = embedder or create_embedder("hashing")
        self._chunking = chunking
        self._max_file_bytes = max_file_bytes
        self.policy = policy or FilePolicy()
        self._searcher = HybridSearcher(self._store, self._embedder, options)

    @property
    def name(self) -> str:
        return f"workspace:{self.root}"

    @property
    def embedder(self) -> EmbeddingBackend:
        return self._embedder

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        hits = await asyncio.to_thread(self.search_sync, query, k=k)
        return [hit.to_retrieval_hit(self.name) for hit in hits]

    def search_sync(
        self, query: str, *, k: int = 10, fusion: FusionMethod | None = None
    ) -> list[SearchHit]:
        """The best ``k`` hits; a hit from a file the policy now refuses (indexed before the
        policy changed, until the next refresh drops it) is left out."""
        hits = self._searcher.search(self.workspace_id, query, k=k, fusion=fusion)
        return [h for h in hits if self.policy.refusal(self.root, h.path) is None]

    async def index(self, *, progress: ProgressCallback | None = None) -> IndexReport:
        return await asyncio.to_thread(self.index_sync, progress=progress)

    def index_sync(self, *, progress: ProgressCallback | None = None) -> IndexReport:
        """Index the workspace; when files changed, its keyword index and (from
        ``ann_min_rows`` chunks) its approximate vector index are caught up too (and saved
        once enough changed), so the next fresh process loads them. A big enough workspace
        without a saved vector index gets one even when nothing changed."""
        report = index_workspace(
            self._store,
            self.root,
            embedder=self._embedder,
            progress=progress,
            max_file_bytes=self._max_file_bytes,
            chunking=self._chunking,
            policy=self.policy,
        )
        changed = bool(report.files_indexed or report.files_deleted)
        if changed:
            self._searcher.warm_keywords(self.workspace_id)
        self._searcher.warm_vectors(self.workspace_id, changed=changed)
        return report

    async def refresh(self) -> str | None:
        """Bring the index up to date before a turn: a stat scan, and only changed files are
        re-read. Returns a note for the trace when the index is empty or changed, else None."""
        report = await self.index()
        if report.chunks_total == 0:
            return f"workspace index is empty ({report.files_seen} files seen, none with text)"
        if report.files_indexed or report.files_deleted:
            return (
                f"workspace index refreshed: {report.files_indexed} files indexed, "
                f"{report.files_deleted} removed ({report.seconds:.2f} s)"
            )
        return None

    def close(self) -> None:
        """Stop the searcher's worker threads; the database stays open (the caller owns it)."""
        self._searcher.close()

    async def reembed(self, *, progress: ProgressCallback | None = None) -> ReembedReport:
        return await asyncio.to_thread(
            reembed, self._store, self.workspace_id, self._embedder, progress
        )
