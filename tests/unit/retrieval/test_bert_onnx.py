"""MiniLM on ONNX Runtime (``bert_onnx``): the same vectors as sentence-transformers (so indexes
stored by either stay valid), no torch import on the default path, and an offline graph cache."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kairox.retrieval.embeddings import bert_onnx
from kairox.retrieval.embeddings.bert_graph import UnsupportedModel, bert_config
from kairox.retrieval.embeddings.sentence_transformers import (
    SentenceTransformersEmbedder,
    resolve_model_path,
)

TEXTS = [
    "which database do we use",
    "The attention mask hides padding tokens from the softmax.",
    "def parse_config(path):\n    return toml.load(path)\n" * 30,  # past 256 tokens: truncated
    "naïve café — unicode ✓ 東京",
    "",
    "x",
    "Commit messages follow Conventional Commits",
    "    if mask is not None:\n        scores = scores.masked_fill(mask == 0, -1e9)",
]


@pytest.fixture(scope="module")
def minilm() -> tuple[str, Path]:
    canonical, location = resolve_model_path("all-MiniLM-L6-v2")
    return canonical, Path(location)


def test_vectors_match_sentence_transformers(
    minilm: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    canonical, directory = minilm
    fast = bert_onnx.OnnxBertEmbedder(canonical, directory)
    reference = SentenceTransformersEmbedder("all-MiniLM-L6-v2")
    assert fast.model_id == reference.model_id == "sentence-transformers:all-MiniLM-L6-v2"
    ours, theirs = fast.embed(TEXTS), reference.embed(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert float((ours * theirs).sum(axis=1).min()) >= 0.999
    # One at a time (the query path: no padding) gives the batch's vectors.
    alone = np.vstack([fast.embed([t]) for t in TEXTS[:3]])
    assert float((alone * ours[:3]).sum(axis=1).min()) >= 0.9999
    # The graph was cached once, and a second embedder loads it instead of building it.
    cached = list((tmp_path / "cache" / "kairox" / "onnx").glob("*.onnx"))
    assert len(cached) == 1
    again = bert_onnx.OnnxBertEmbedder(canonical, directory)
    assert again._model_file() == str(cached[0])


def test_unwritable_cache_builds_in_memory(
    minilm: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    embedder = bert_onnx.OnnxBertEmbedder(*minilm)
    assert isinstance(embedder._model_file(), bytes)
    assert embedder.embed(["hello"]).shape == (1, 384)


def test_default_path_does_not_import_torch(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from kairox.retrieval.embeddings import create_embedder\n"
        "e = create_embedder('sentence-transformers:all-MiniLM-L6-v2')\n"
        "v = e.embed(['where is the attention mask'])\n"
        "print(type(e).__name__, v.shape[1], 'torch' in sys.modules,"
        " 'sentence_transformers' in sys.modules)\n"
    )
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    env.update({k: v for k, v in __import__("os").environ.items() if k == "PYTHONPATH"})
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["OnnxBertEmbedder", "384", "False", "False"]


def test_models_it_cannot_reproduce_fall_back(minilm: tuple[str, Path], tmp_path: Path) -> None:
    _, directory = minilm
    assert bert_onnx.available(directory)
    other = tmp_path / "model"
    other.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "modules.json"):
        (other / name).symlink_to(directory / name)
    (other / "1_Pooling").mkdir()
    pooling = json.loads((directory / "1_Pooling" / "config.json").read_text())
    config = json.loads((directory / "config.json").read_text())
    (other / "config.json").write_text(json.dumps(config))
    (other / "1_Pooling" / "config.json").write_text(
        json.dumps({**pooling, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True})
    )
    assert not bert_onnx.available(other)  # CLS pooling: sentence-transformers keeps it
    with pytest.raises(UnsupportedModel, match="not mean pooling"):
        bert_config(other)
    (other / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (other / "config.json").write_text(json.dumps({**config, "model_type": "xlm-roberta"}))
    assert not bert_onnx.available(other)
