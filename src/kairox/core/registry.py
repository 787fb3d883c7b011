"""A table of names (a spec prefix, a config kind) to what builds them: each name registered
once, plugins looked up on a miss. The embedders, the knowledge-base kinds and their config
models are such tables."""

from __future__ import annotations

import re
from typing import Generic, TypeVar

from kairox.core.plugins import load_plugins

T = TypeVar("T")
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")


class Registry(Generic[T]):
    """``what`` names an entry in messages ("embedder prefix"); ``plugins`` is the entry-point
    group searched when a name is missing (``kairox.core.plugins``)."""

    def __init__(self, what: str, *, plugins: str | None = None) -> None:
        self._what = what
        self._plugins = plugins
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T, *, replace: bool = False) -> T | None:
        """Register ``entry`` under ``name``; returns the entry it replaced. Taking a name that
        exists without ``replace=True`` is a ``ValueError``, so two plugins cannot silently take
        the same name."""
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"{self._what} {name!r} must be lower-case letters, digits, '-' or '_', "
                "starting with a letter"
            )
        previous = self._entries.get(name)
        if previous is not None and not replace:
            raise ValueError(
                f"{self._what} '{name}' is already registered; pass replace=True to override it"
            )
        self._entries[name] = entry
        return previous

    def remove(self, name: str) -> T | None:
        return self._entries.pop(name, None)

    def get(self, name: str) -> T | None:
        """The entry of ``name``, looking through the installed plugins on a miss."""
        if name not in self._entries and self._plugins is not None:
            load_plugins(self._plugins)
        return self._entries.get(name)

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._entries)

    def entries(self) -> tuple[T, ...]:
        return tuple(self._entries.values())
