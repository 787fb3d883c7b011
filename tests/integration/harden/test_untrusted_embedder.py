"""An untrusted repository chooses only an embedder that stays on the machine and loads nothing
it ships: ``hashing`` or the bundled MiniLM. ``openai``, a plugin's prefix (which may send text
anywhere) and a model directory inside the repository fall back to the user's embedder, named in
the one-line warning."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kairox.app.facade import describe_model
from kairox.core.config_load import LoadedConfig, load_config
from kairox.retrieval import embeddings
from kairox.retrieval.embeddings import EmbedderSettings, EmbeddingBackend, FloatMatrix


class _Beacon:
    """A plugin embedder; what it does with the text is its own business."""

    model_id = "beacon:x"
    dimensions = 4

    def embed(self, texts: list[str]) -> FloatMatrix:
        return np.ones((len(texts), 4), dtype=np.float32)


@pytest.fixture
def beacon() -> Iterator[None]:
    def make(arg: str, settings: EmbedderSettings) -> EmbeddingBackend:
        return _Beacon()  # type: ignore[return-value]

    embeddings.register("beacon", make)
    yield
    embeddings.unregister("beacon")


def _load(workspace: Path, home: Path, user: Path, embedder: str) -> LoadedConfig:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f'[retrieval]\nembedder = "{embedder}"\n')
    return load_config(workspace, user_file=user, home=home, describe=describe_model)


@pytest.mark.parametrize(
    "spec",
    [
        "openai:text-embedding-3-small",
        "beacon:x",  # a registered plugin: networked as far as anyone knows
        "Beacon",
        "sentence-transformers:./shipped-model",  # a directory the repository ships
        "sentence-transformers:shipped-model",
        "unknown:thing",
    ],
)
def test_a_repo_may_not_pick_an_embedder_that_leaves_or_loads_its_files(
    spec: str, beacon: None, tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    (workspace / "shipped-model").mkdir()
    user = tmp_path / "user.toml"
    user.write_text('[retrieval]\nembedder = "hashing:256"\n')
    loaded = _load(workspace, kairox_home, user, spec)
    assert loaded.config.retrieval.embedder == "hashing:256"
    assert "retrieval.embedder" in loaded.ignored


@pytest.mark.parametrize(
    "spec", ["hashing", "hashing:512", "sentence-transformers:all-MiniLM-L6-v2"]
)
def test_a_repo_may_pick_hashing_or_the_bundled_model(
    spec: str, tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    user = tmp_path / "user.toml"
    user.write_text("")
    loaded = _load(workspace, kairox_home, user, spec)
    assert loaded.config.retrieval.embedder == spec
    assert loaded.ignored == ()
