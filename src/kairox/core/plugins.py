"""Plugins found through entry points, as ``llm`` finds its plugins: an installed package
declares ``[project.entry-points."kairox.embedders"]`` (or ``"kairox.models"``,
``"kairox.knowledge_bases"``) and the module it names calls ``register(...)`` when imported (an
entry point naming a function is called with no arguments instead).

A group is loaded once per process, on the first lookup of a name nobody registered, so the
built-in backends never pay for it. A plugin that fails to load is remembered with its error
(``failures``) for the message about the name it failed to provide; it never breaks the others.
"""

from __future__ import annotations

import threading
from types import ModuleType

MODELS = "kairox.models"
EMBEDDERS = "kairox.embedders"
KNOWLEDGE_BASES = "kairox.knowledge_bases"

_loaded: set[str] = set()
_failures: dict[str, list[str]] = {}
_lock = threading.Lock()


def load_plugins(group: str) -> None:
    """Import (or call) every entry point of ``group`` once per process."""
    from importlib.metadata import entry_points

    with _lock:
        if group in _loaded:
            return
        _loaded.add(group)
        for point in entry_points(group=group):
            try:
                target = point.load()
                if not isinstance(target, ModuleType) and callable(target):
                    target()
            except Exception as exc:  # a broken plugin must not break the others
                _failures.setdefault(group, []).append(
                    f"plugin '{point.name}' ({point.value}) failed to load: {exc}"
                )


def failures(group: str) -> list[str]:
    """What went wrong loading ``group``'s plugins, one line each."""
    return list(_failures.get(group, ()))


def failure_note(group: str) -> str:
    """``failures`` as a suffix for an error message ('' when every plugin loaded)."""
    found = failures(group)
    return f" ({'; '.join(found)})" if found else ""
