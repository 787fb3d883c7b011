"""Index a workspace into the chunk store: walk, read, chunk, embed and write only what changed.

A file is re-read only when its size or mtime changed, or when its mtime is too close to the last
check to be trusted ("racy", as git calls it); it is re-chunked only when its SHA-256 changed.
Vectors are kept per (chunk, model): unchanged chunk texts reuse their vectors, and a new model
embeds whatever lacks a vector for it. Progress is reported as typed events.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from kairox.core.ids import workspace_id_for
from kairox.retrieval.chunking import Chunk, ChunkingOptions, chunk_text
from kairox.retrieval.embeddings.base import EmbeddingBackend, FloatMatrix
from kairox.retrieval.file_policy import FilePolicy
from kairox.retrieval.progress import (
    ChunksEmbedded,
    FileOutcome,
    FileProcessed,
    FilesRemoved,
    IndexEvent,
    IndexFinished,
    IndexReport,
    ProgressCallback,
    ReembedReport,
    WalkFinished,
)
from kairox.retrieval.walker import (
    DEFAULT_MAX_FILE_BYTES,
    FileSkipped,
    TextFile,
    WorkspaceFile,
    read_text_file,
    walk_workspace,
)
from kairox.store.protocols import ChunkStore
from kairox.store.records import FileState, FileUpdate

# mtimes closer than this to the previous check are not trusted (coarse filesystem clocks).
RACY_WINDOW_NS = 2_000_000_000
BATCH_CHUNKS = 256
EMBED_BATCH = 64


def index_workspace(
    store: ChunkStore,
    root: str | os.PathLike[str],
    *,
    embedder: EmbeddingBackend,
    progress: ProgressCallback | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    chunking: ChunkingOptions | None = None,
    policy: FilePolicy | None = None,
) -> IndexReport:
    """Bring the index of the workspace at ``root`` up to date and say what changed. Files the
    ``policy`` refuses are never read, and their chunks indexed earlier are dropped."""
    indexer = _Indexer(store, embedder, progress, max_file_bytes, chunking)
    return indexer.run(root, policy or FilePolicy())


def reembed(
    store: ChunkStore,
    workspace_id: str,
    embedder: EmbeddingBackend,
    progress: ProgressCallback | None = None,
) -> ReembedReport:
    """Embed every chunk of the workspace that has no vector for ``embedder.model_id``."""
    started = time.perf_counter()
    done = _embed_missing(store, workspace_id, embedder, progress)
    return ReembedReport(workspace_id, embedder.model_id, done, time.perf_counter() - started)


def _embed_missing(
    store: ChunkStore,
    workspace_id: str,
    embedder: EmbeddingBackend,
    progress: ProgressCallback | None,
) -> int:
    model = embedder.model_id
    total = store.count_missing_vectors(workspace_id, model)
    done = 0
    while done < total:
        batch = store.chunks_missing_vectors(workspace_id, model, limit=EMBED_BATCH)
        if not batch:
            break
        vectors = embedder.embed([text for _, text in batch])
        store.put_vectors(workspace_id, model, [cid for cid, _ in batch], vectors)
        done += len(batch)
        if progress:
            progress(ChunksEmbedded(model, done, total))
    return done


@dataclass(frozen=True, slots=True)
class _Pending:
    file: WorkspaceFile
    text: TextFile
    chunks: tuple[Chunk, ...]
    existed: bool


class _Indexer:
    def __init__(
        self,
        store: ChunkStore,
        embedder: EmbeddingBackend,
        progress: ProgressCallback | None,
        max_file_bytes: int,
        chunking: ChunkingOptions | None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.progress = progress
        self.max_file_bytes = max_file_bytes
        self.chunking = chunking or ChunkingOptions()
        self.pending: list[_Pending] = []
        self.pending_chunks = 0
        self.indexed = 0
        self.written = 0
        self.embedded = 0
        self.done = 0
        self.total = 0

    def run(self, root: str | os.PathLike[str], policy: FilePolicy) -> IndexReport:
        started = time.perf_counter()
        checked_ns = time.time_ns()
        walk = walk_workspace(root, max_file_bytes=self.max_file_bytes, policy=policy)
        self.workspace_id = workspace_id_for(walk.root)
        self.checked_ns = checked_ns
        self.store.ensure_workspace(self.workspace_id, str(walk.root))
        self._emit(WalkFinished(str(walk.root), len(walk.files), len(walk.skipped), walk.ignored))
        known = self.store.file_states(self.workspace_id)
        # Chunks made by another chunker (version or options) must all be rebuilt.
        rechunk = self.store.chunker(self.workspace_id) != self.chunking.signature
        skipped = list(walk.skipped)
        keep: set[str] = set()
        touched: list[FileState] = []
        unchanged = 0
        self.total = len(walk.files)
        for file in walk.files:
            previous = known.get(file.path)
            if previous is not None and not rechunk and _trusted(previous, file):
                unchanged += 1
                keep.add(file.path)
                self._file_done(file.path, FileOutcome.UNCHANGED, 0)
                continue
            try:
                text = read_text_file(file, max_file_bytes=self.max_file_bytes)
            except FileSkipped as skip:
                skipped.append(skip.skipped)
                self._file_done(file.path, FileOutcome.SKIPPED, 0)
                continue
            keep.add(file.path)
            if previous is not None and not rechunk and previous.file_hash == text.file_hash:
                touched.append(self._state(file, text))
                unchanged += 1
                self._file_done(file.path, FileOutcome.UNCHANGED, 0)
                continue
            chunks = tuple(chunk_text(text.text, file.path, self.chunking))
            self.pending.append(_Pending(file, text, chunks, previous is not None))
            self.pending_chunks += len(chunks)
            if self.pending_chunks >= BATCH_CHUNKS:
                self._flush()
        self._flush()
        if rechunk:
            self.store.set_chunker(self.workspace_id, self.chunking.signature)
        self.store.touch_files(self.workspace_id, touched)
        gone = tuple(sorted(path for path in known if path not in keep))
        if gone:
            self.store.delete_files(self.workspace_id, gone)
            self._emit(FilesRemoved(gone))
        self.embedded += _embed_missing(self.store, self.workspace_id, self.embedder, self.progress)
        report = IndexReport(
            root=str(walk.root),
            workspace_id=self.workspace_id,
            model=self.embedder.model_id,
            files_seen=len(walk.files),
            files_indexed=self.indexed,
            files_unchanged=unchanged,
            files_deleted=len(gone),
            chunks_written=self.written,
            chunks_embedded=self.embedded,
            chunks_total=self.store.chunk_count(self.workspace_id),
            ignored=walk.ignored,
            skipped=tuple(skipped),
            seconds=time.perf_counter() - started,
        )
        self._emit(IndexFinished(report))
        return report

    def _flush(self) -> None:
        if not self.pending:
            return
        model = self.embedder.model_id
        reusable = self.store.vectors_by_hash(
            self.workspace_id, [p.file.path for p in self.pending if p.existed], model
        )
        fresh = list({c.chunk_hash: c.text for p in self.pending for c in p.chunks
                      if c.chunk_hash not in reusable}.items())  # fmt: skip
        vectors: dict[str, FloatMatrix] = {}
        for i in range(0, len(fresh), EMBED_BATCH):
            batch = fresh[i : i + EMBED_BATCH]
            matrix = self.embedder.embed([text for _, text in batch])
            vectors.update((h, matrix[j]) for j, (h, _) in enumerate(batch))
        self.embedded += len(fresh)
        updates = []
        for item in self.pending:
            rows = [
                vectors[c.chunk_hash]
                if c.chunk_hash in vectors
                else np.frombuffer(reusable[c.chunk_hash], dtype="<f4")
                for c in item.chunks
            ]
            stacked = np.stack(rows).astype(np.float32) if rows else None
            updates.append(FileUpdate(self._state(item.file, item.text), item.chunks, stacked))
        self.written += self.store.write_files(self.workspace_id, updates, model=model)
        for item in self.pending:
            self.indexed += 1
            self._file_done(item.file.path, FileOutcome.INDEXED, len(item.chunks))
        self.pending = []
        self.pending_chunks = 0

    def _state(self, file: WorkspaceFile, text: TextFile) -> FileState:
        return FileState(file.path, file.size, file.mtime_ns, text.file_hash, self.checked_ns)

    def _file_done(self, path: str, outcome: FileOutcome, chunks: int) -> None:
        self.done += 1
        self._emit(FileProcessed(path, outcome, chunks, self.done, self.total))

    def _emit(self, event: IndexEvent) -> None:
        if self.progress is not None:
            self.progress(event)


def _trusted(previous: FileState, file: WorkspaceFile) -> bool:
    """Skip reading only if size and mtime match and the mtime predates the last check safely."""
    return (
        previous.size == file.size
        and previous.mtime_ns == file.mtime_ns
        and file.mtime_ns + RACY_WINDOW_NS < previous.indexed_ns
    )
