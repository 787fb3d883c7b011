"""Local GGUF models, as the surfaces see them: the known ones, the pulled ones, pull and remove."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from pathlib import Path

from kairox.core.aio import blocking
from kairox.models import catalog
from kairox.models.pull import Progress, PullReport, pull, remove


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One local model: where it comes from, whether it is pulled, and what it can do."""

    name: str
    title: str
    licence: str
    size: int | None
    sha256: str | None
    url: str | None
    path: str | None  # the file, when pulled (or bundled)
    follows_protocol: bool  # proposes memories with <memory> markers
    used_by_local: bool  # plain ``local`` runs it

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "licence": self.licence,
            "size": self.size,
            "sha256": self.sha256,
            "url": self.url,
            "path": self.path,
            "follows_protocol": self.follows_protocol,
            "used_by_local": self.used_by_local,
        }


class ModelsArea:
    def __init__(self, home: Path) -> None:
        self._home = home

    def list(self) -> builtins.list[ModelInfo]:
        """The known models and every model pulled into the home."""
        pulled = {p.model.name: p for p in catalog.pulled(self._home)}
        default = catalog.default_local(self._home)
        used = default.model.name if default is not None else catalog.SMOLLM2
        names = list(dict.fromkeys([*catalog.KNOWN, *pulled]))
        out: builtins.list[ModelInfo] = []
        for name in names:
            found = pulled.get(name)
            model = found.model if found is not None else catalog.KNOWN[name]
            path = str(found.path) if found is not None else None
            if name == catalog.SMOLLM2:  # bundled, never pulled
                path = self._bundled()
            out.append(
                ModelInfo(
                    name=name,
                    title=model.title,
                    licence=model.licence,
                    size=model.size,
                    sha256=model.sha256,
                    url=model.url,
                    path=path,
                    follows_protocol=model.follows_protocol,
                    used_by_local=name == used,
                )
            )
        return out

    async def pull(
        self,
        name: str,
        *,
        url: str | None = None,
        sha256: str | None = None,
        progress: Progress | None = None,
    ) -> PullReport:
        """Download ``name`` into the home (resumable, verified by SHA-256)."""
        return await blocking(
            pull, name, url=url, sha256=sha256, home=self._home, progress=progress
        )

    def _bundled(self) -> str | None:
        from kairox.core.errors import KairoxError
        from kairox.models.local import default_model_path

        try:
            return str(default_model_path())
        except KairoxError:
            return None

    def remove(self, name: str) -> builtins.list[Path]:
        return remove(name, home=self._home)

    def local_file_origin(self, spec: str) -> str | None:
        """Why a ``local`` spec runs the file ``local_file`` names, in the words ``config show``
        puts beside it; None for other backends."""
        text = spec.strip()
        if text.startswith("local:"):
            return f"the file {text} names"
        if text != "local":
            return None
        chosen = catalog.default_local(self._home)
        if chosen is None:
            return "built in: the bundled demo model (no model pulled; see `kairox models list`)"
        return f"the best pulled model ({chosen.model.name}; see `kairox models list`)"

    def local_file(self, spec: str) -> str | None:
        """The GGUF file a ``local`` spec runs (``config show`` and the trace name it); None for
        other backends, or when it cannot be found."""
        text = spec.strip()
        if text != "local" and not text.startswith("local:"):
            return None
        from kairox.core.errors import KairoxError
        from kairox.models.local import resolve_model

        argument = None if text == "local" else text.partition(":")[2].strip()
        try:
            return str(resolve_model(argument, self._home))
        except KairoxError:
            return None
