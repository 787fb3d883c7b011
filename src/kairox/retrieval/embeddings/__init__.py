"""Embedding backends, chosen by a config string; each backend module is imported only when used.

hashing | hashing:<dims>            deterministic, offline default
sentence-transformers:<model>       local model, ``embeddings`` extra, never downloads; a BERT
                                    mean-pooling model runs on ONNX Runtime when it is installed
                                    (same vectors, no torch import), else on sentence-transformers
openai:<model>                      any OpenAI-compatible /v1/embeddings endpoint

The registry maps a spec prefix to a factory, as ``kairox.models`` does for model specs:
``register("mine", make_mine)`` makes ``mine:<model>`` an embedder everywhere one is configured,
and installed packages add prefixes through the ``kairox.embedders`` entry points
(``kairox.core.plugins``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from kairox.core.errors import ConfigError
from kairox.core.plugins import EMBEDDERS, failure_note
from kairox.core.registry import Registry
from kairox.retrieval.embeddings.base import EmbeddingBackend, FloatMatrix, l2_normalise

DEFAULT_EMBEDDER = "hashing"

__all__ = [
    "DEFAULT_EMBEDDER",
    "EmbedderFactory",
    "EmbedderSettings",
    "EmbeddingBackend",
    "FloatMatrix",
    "create_embedder",
    "is_lexical",
    "l2_normalise",
    "register",
]


@dataclass(frozen=True, slots=True)
class EmbedderSettings:
    """Where a networked embedder sends text (``openai``: an OpenAI-compatible endpoint)."""

    base_url: str | None = None
    api_key_env: str | None = None


EmbedderFactory = Callable[[str, EmbedderSettings], EmbeddingBackend]
"""Builds an embedder from the part of the spec after ``prefix:`` (``""`` for a bare prefix
that allows it) and the settings."""


@dataclass(frozen=True, slots=True)
class Embedder:
    """One registered prefix: ``argument`` names what follows ``prefix:`` in the accepted forms;
    ``bare`` lets the prefix alone be a spec (``hashing``)."""

    prefix: str
    factory: EmbedderFactory
    argument: str = "model"
    bare: bool = False

    @property
    def forms(self) -> tuple[str, ...]:
        full = f"{self.prefix}:<{self.argument}>"
        return (self.prefix, full) if self.bare else (full,)


_EMBEDDERS: Registry[Embedder] = Registry("embedder prefix", plugins=EMBEDDERS)


def register(
    prefix: str,
    factory: EmbedderFactory,
    *,
    argument: str = "model",
    bare: bool = False,
    replace: bool = False,
) -> Embedder | None:
    """Make ``prefix:<argument>`` an embedder spec everywhere one is accepted. Returns the
    embedder it replaced (with ``replace=True``); taking a prefix that exists without it is a
    ``ValueError``, so two plugins cannot silently take the same prefix."""
    return _EMBEDDERS.add(
        prefix, Embedder(prefix, factory, argument=argument, bare=bare), replace=replace
    )


def unregister(prefix: str) -> Embedder | None:
    """Remove a prefix; returns its embedder (None when there was none)."""
    return _EMBEDDERS.remove(prefix)


def spec_forms() -> str:
    """The accepted spec forms, for error messages (``'hashing', 'openai:<model>', ...``)."""
    return ", ".join(f"'{form}'" for e in _EMBEDDERS.entries() for form in e.forms)


def create_embedder(
    spec: str = DEFAULT_EMBEDDER,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> EmbeddingBackend:
    """Build the backend a config string names. ``base_url``/``api_key_env`` reach the factory
    (``openai`` uses them)."""
    kind, _, arg = spec.strip().partition(":")
    kind = kind.strip().lower()
    arg = arg.strip()
    found = _EMBEDDERS.get(kind)
    if found is None:
        raise ConfigError(
            f"unknown embedder '{spec}'{failure_note(EMBEDDERS)}",
            key="embeddings",
            fix=f"use {spec_forms()}",
        )
    if not arg and not found.bare:
        raise ConfigError(
            f"embedder '{spec}' names no {found.argument}",
            key="embeddings",
            fix=f"use {spec_forms()}",
        )
    return found.factory(arg, EmbedderSettings(base_url=base_url, api_key_env=api_key_env))


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


# -- the built-in embedders, each imported only when a spec asks for it -----------------------


def _hashing(dims: str, settings: EmbedderSettings) -> EmbeddingBackend:
    from kairox.retrieval.embeddings.hashing import DEFAULT_DIMENSIONS, HashingEmbedder

    if not dims:
        return HashingEmbedder(DEFAULT_DIMENSIONS)
    if not dims.isdigit() or int(dims) < 8:
        raise ConfigError(
            f"bad embedder 'hashing:{dims}': dimensions must be an integer >= 8",
            key="embeddings",
            fix="write e.g. 'hashing:384'",
        )
    return HashingEmbedder(int(dims))


def _sentence_transformers(model: str, settings: EmbedderSettings) -> EmbeddingBackend:
    return _local_model(model)


def _openai(model: str, settings: EmbedderSettings) -> EmbeddingBackend:
    from kairox.retrieval.embeddings.openai import DEFAULT_API_KEY_ENV, OpenAIEmbedder

    return OpenAIEmbedder(
        model,
        base_url=settings.base_url,
        api_key_env=settings.api_key_env or DEFAULT_API_KEY_ENV,
    )


register("hashing", _hashing, argument="dims", bare=True)
register("sentence-transformers", _sentence_transformers)
register("openai", _openai)
