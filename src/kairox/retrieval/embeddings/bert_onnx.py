"""``sentence-transformers:<model>`` on ONNX Runtime: the same weights and vectors, without torch.

Importing torch + sentence-transformers costs 5-7 s per process; ONNX Runtime and ``tokenizers``
load in a fraction of that. The graph (``bert_graph``) is built once from the model's own
``model.safetensors`` and cached under ``$XDG_CACHE_HOME/kairox/onnx`` (or ``~/.cache``), keyed
by the weights file's path, size and mtime; if the cache cannot be written it is built in memory
each time. The model id stays ``sentence-transformers:<canonical name>``: the vectors match the
torch backend's to cosine >= 0.999 (tests/unit/retrieval/test_bert_onnx.py), so stored vectors
stay valid whichever backend wrote them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kairox.core.errors import RetrievalError
from kairox.retrieval.embeddings.base import FloatMatrix, empty_matrix, l2_normalise

GRAPH_VERSION = "1"  # bump when bert_graph builds a different graph
BATCH = 32
QUERY_BATCH_MAX = 8


def available(directory: Path) -> bool:
    """True when ONNX Runtime and tokenizers are installed and ``directory`` holds a BERT
    mean-pooling model this backend reproduces (checked from its config files only)."""
    from kairox.retrieval.embeddings.bert_graph import UnsupportedModel, bert_config

    if importlib.util.find_spec("onnxruntime") is None:
        return False
    if importlib.util.find_spec("tokenizers") is None:
        return False
    if (
        not (directory / "model.safetensors").is_file()
        or not (directory / "tokenizer.json").is_file()
    ):
        return False
    try:
        bert_config(directory)
    except UnsupportedModel:
        return False
    return _normalises(directory)


def _normalises(directory: Path) -> bool:
    try:
        modules = json.loads((directory / "modules.json").read_text())
    except (OSError, ValueError):
        return False
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    return kinds in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"])


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kairox" / "onnx"


class OnnxBertEmbedder:
    """A local BERT sentence encoder run by ONNX Runtime; loaded on first use, offline only."""

    def __init__(self, canonical: str, directory: Path, *, threads: int | None = None) -> None:
        self._canonical = canonical
        self._directory = directory
        self._threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._dimensions: int | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"sentence-transformers:{self._canonical}"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            config = json.loads((self._directory / "config.json").read_text())
            self._dimensions = int(config["hidden_size"])
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return empty_matrix(self.dimensions)
        with self._lock:
            self._load()
            try:
                pooled = self._run(list(texts))
            except Exception as exc:  # onnxruntime raises its own zoo of types
                reason = f"encoding failed: {type(exc).__name__}: {exc}".splitlines()[0]
                raise RetrievalError(self.model_id, reason) from exc
        return l2_normalise(pooled)

    def _run(self, texts: list[str]) -> FloatMatrix:
        # Longest first, as sentence-transformers does, so each batch pads little.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            picked = order[start : start + BATCH]
            encodings = self._tokenizer.encode_batch([texts[i] for i in picked])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            out[picked] = self._session.run(["pooled"], feeds)[0]
        return out

    def _load(self) -> None:
        if self._session is not None:
            return
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - available() checked both
            raise RetrievalError(self.model_id, f"cannot import {exc.name}") from exc
        try:
            tokenizer = Tokenizer.from_file(str(self._directory / "tokenizer.json"))
            tokenizer.enable_truncation(max_length=_max_tokens(self._directory))
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self._threads or min(os.cpu_count() or 1, 4)
            options.inter_op_num_threads = 1
            # Worker threads that spin between ops steal a busy machine's cores (as OpenBLAS's do).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.log_severity_level = 3
            model = self._model_file()
            session = onnxruntime.InferenceSession(
                model, sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise RetrievalError(
                self.model_id,
                f"cannot load model '{self._canonical}' for ONNX Runtime "
                f"({type(exc).__name__}: {exc})".splitlines()[0],
            ) from exc
        self._tokenizer = tokenizer
        self._session = session

    def _model_file(self) -> str | bytes:
        """The cached graph's path, building (and caching) it first when missing."""
        from kairox.retrieval.embeddings.bert_graph import build_model

        weights = (self._directory / "model.safetensors").resolve()
        stat = weights.stat()
        key = f"{GRAPH_VERSION}|{weights}|{stat.st_size}|{stat.st_mtime_ns}"
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        try:
            target = cache_dir() / f"{_slug(self._canonical)}-{digest}.onnx"
        except RuntimeError:  # no home directory to find a cache in
            return build_model(self._directory)
        if target.is_file():
            return str(target)
        data = build_model(self._directory)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, target)
        except OSError:
            return data  # a read-only home: build in memory each time
        return str(target)


def _max_tokens(directory: Path) -> int:
    try:
        config = json.loads((directory / "sentence_bert_config.json").read_text())
        return int(config.get("max_seq_length") or 512)
    except (OSError, ValueError):
        return 512


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(name).name)[:60]
