"""Local GGUF models: the known ones (URL, size, licence, official SHA-256, how to run them) and
the ones pulled into the home's ``models/`` directory.

A pulled model is the spec ``local:NAME``; plain ``local`` runs the best pulled model that follows
the memory protocol, or the bundled SmolLM2 (a demo that needs no download) when none is pulled.
Each model carries its own reply cap, repetition penalty and protocol prompt (``full`` or the
short one small models can follow).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kairox.core.paths import resolve_home

Protocol = Literal["full", "short"]
MODELS_DIR = "models"
SMOLLM2 = "smollm2-135m-instruct"


@dataclass(frozen=True, slots=True)
class LocalModel:
    """How to fetch and run one GGUF model. ``sha256`` None: the publisher gives none we ship."""

    name: str
    title: str
    file: str
    url: str | None
    size: int | None
    sha256: str | None
    licence: str
    protocol: Protocol = "full"
    follows_protocol: bool = True  # proposes memories with <memory> markers
    reply_cap: int = 512  # max tokens of one reply
    repeat_penalty: float = 1.1


KNOWN: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            name="qwen2.5-coder-0.5b-instruct",
            title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            url="https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/"
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            licence="Apache-2.0",
        ),
        LocalModel(
            name="qwen2.5-0.5b-instruct",
            title="Qwen2.5-0.5B-Instruct Q4_K_M",
            file="qwen2.5-0.5b-instruct-q4_k_m.gguf",
            url="https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/"
            "qwen2.5-0.5b-instruct-q4_k_m.gguf",
            # Qwen's published SHA-256 and size of this file (the Hugging Face LFS object at
            # revision 9217f5db79a29953eb74d5343926648285ec7e67)
            size=491_400_032,
            sha256="74a4da8c9fdbcd15bd1f6d01d621410d31c6fc00986f5eb687824e7b93d7a9db",
            licence="Apache-2.0",
        ),
        LocalModel(
            name=SMOLLM2,
            title="SmolLM2-135M-Instruct Q4_1 (bundled demo)",
            file="SmolLM2-135M-Instruct.Q4_1.gguf",
            url=None,
            size=None,
            sha256=None,
            licence="Apache-2.0",
            protocol="short",
            follows_protocol=False,
            reply_cap=256,
            repeat_penalty=1.3,
        ),
    )
}
PREFERRED = ("qwen2.5-coder-0.5b-instruct", "qwen2.5-0.5b-instruct")
"""Pulled models ``local`` uses, best first."""


def models_dir(home: str | Path | None = None) -> Path:
    return resolve_home(home) / MODELS_DIR


@dataclass(frozen=True, slots=True)
class PulledModel:
    model: LocalModel
    path: Path


def pulled(home: str | Path | None = None) -> list[PulledModel]:
    """The models in the home, known ones first (each has ``NAME.gguf`` and ``NAME.json``)."""
    root = models_dir(home)
    if not root.is_dir():
        return []
    found: list[PulledModel] = []
    for meta in sorted(root.glob("*.json")):
        path = meta.with_suffix(".gguf")
        if not path.is_file():
            continue
        found.append(PulledModel(describe(meta.stem, meta), path))
    found.sort(key=lambda p: (p.model.name not in KNOWN, p.model.name))
    return found


def describe(name: str, meta: Path | None = None) -> LocalModel:
    """The catalog entry of ``name``, or the one written beside a model pulled by URL."""
    if name in KNOWN:
        return KNOWN[name]
    data: dict[str, object] = {}
    if meta is not None and meta.is_file():
        loaded = json.loads(meta.read_text(encoding="utf-8"))
        data = loaded if isinstance(loaded, dict) else {}
    size = data.get("size")
    return LocalModel(
        name=name,
        title=name,
        file=f"{name}.gguf",
        url=str(data.get("url")) if data.get("url") else None,
        size=size if isinstance(size, int) else None,
        sha256=str(data.get("sha256")) if data.get("sha256") else None,
        licence=str(data.get("licence") or "unknown"),
    )


def find_pulled(name: str, home: str | Path | None = None) -> PulledModel | None:
    for model in pulled(home):
        if model.model.name == name:
            return model
    return None


def default_local(home: str | Path | None = None) -> PulledModel | None:
    """The pulled model plain ``local`` runs: the first of ``PREFERRED`` in the home."""
    for name in PREFERRED:
        found = find_pulled(name, home)
        if found is not None:
            return found
    return None


def model_for_path(path: Path) -> LocalModel:
    """The catalog entry of a GGUF file (by file name), or a generic one."""
    for model in KNOWN.values():
        if model.file == path.name:
            return model
    return describe(path.stem)


def local_model_of(spec: str, home: str | Path | None = None) -> LocalModel | None:
    """The catalog entry a ``local`` spec runs (without loading it); None for other backends."""
    text = spec.strip()
    if text == "local":
        chosen = default_local(home)
        return chosen.model if chosen is not None else KNOWN[SMOLLM2]
    if not text.startswith("local:"):
        return None
    argument = text.partition(":")[2].strip()
    found = find_pulled(argument, home)
    if found is not None:
        return found.model
    return model_for_path(Path(argument).expanduser())
