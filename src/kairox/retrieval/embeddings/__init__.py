"""Embedding backends, chosen by a config string; each backend module is imported only when used.

hashing | hashing:<dims>            deterministic, offline default
sentence-transformers:<model>       local model, ``embeddings`` extra, never downloads; a BERT
                                    mean-pooling model runs on ONNX Runtime when it is installed
                                    (same vectors, no torch import), else on sentence-transformers
openai:<model>                      any OpenAI-compatible /v1/embeddings endpoint
"""

from __future__ import annotations

import os

from kairox.core.errors import ConfigError
from kairox.retrieval.embeddings.base import EmbeddingBackend, FloatMatrix, l2_normalise

DEFAULT_EMBEDDER = "hashing"
_FIX = "use 'hashing', 'hashing:<dims>', 'sentence-transformers:<model>' or 'openai:<model>'"

__all__ = [
    "DEFAULT_EMBEDDER",
    "EmbeddingBackend",
    "FloatMatrix",
    "create_embedder",
    "is_lexical",
    "l2_normalise",
]


def create_embedder(
    spec: str = DEFAULT_EMBEDDER,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> EmbeddingBackend:
    """Build the backend a config string names. ``base_url``/``api_key_env`` apply to ``openai``."""
    kind, _, arg = spec.strip().partition(":")
    kind = kind.strip().lower()
    arg = arg.strip()
    if kind == "hashing":
        from kairox.retrieval.embeddings.hashing import DEFAULT_DIMENSIONS, HashingEmbedder

        if not arg:
            return HashingEmbedder(DEFAULT_DIMENSIONS)
        if not arg.isdigit() or int(arg) < 8:
            raise ConfigError(
                f"bad embedder '{spec}': dimensions must be an integer >= 8",
                key="embeddings",
                fix="write e.g. 'hashing:384'",
            )
        return HashingEmbedder(int(arg))
    if not arg:
        raise ConfigError(f"embedder '{spec}' names no model", key="embeddings", fix=_FIX)
    if kind == "sentence-transformers":
        return _local_model(arg)
    if kind == "openai":
        from kairox.retrieval.embeddings.openai import DEFAULT_API_KEY_ENV, OpenAIEmbedder

        return OpenAIEmbedder(
            arg, base_url=base_url, api_key_env=api_key_env or DEFAULT_API_KEY_ENV
        )
    raise ConfigError(f"unknown embedder '{spec}'", key="embeddings", fix=_FIX)


def _local_model(name: str) -> EmbeddingBackend:
    """ONNX Runtime where it reproduces the model (no torch import), sentence-transformers else.
    ``KAIROX_EMBEDDINGS_RUNTIME=torch`` keeps sentence-transformers (a bench's baseline)."""
    from pathlib import Path

    from kairox.retrieval.embeddings.sentence_transformers import (
        SentenceTransformersEmbedder,
        resolve_model_path,
    )

    if os.environ.get("KAIROX_EMBEDDINGS_RUNTIME", "").lower() != "torch":
        from kairox.retrieval.embeddings import bert_onnx

        canonical, location = resolve_model_path(name)
        if bert_onnx.available(Path(location)):
            return bert_onnx.OnnxBertEmbedder(canonical, Path(location))
    return SentenceTransformersEmbedder(name)


def is_lexical(embedder: EmbeddingBackend) -> bool:
    """True for embedders that only see word overlap; search then lets BM25 lead."""
    return embedder.model_id.startswith("hashing:")
