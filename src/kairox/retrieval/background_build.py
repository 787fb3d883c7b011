"""When an approximate vector index is built without being asked to: from a scope's second
search in a process, on a background thread, one build per scope at a time. A one-shot CLI
search never pays for a build it would not use; a long-lived process (chat, web, MCP) gets the
index after its first searches. Both indexes use it: the one this process keeps
(``retrieval.ann_indexes``) and the one a store keeps (``retrieval.store_index``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable

log = logging.getLogger(__name__)


class SecondAskBuilds:
    """Counts each key's asks and starts its build on a daemon thread from the second one,
    unless one is running. ``what`` names the index in the warning a failed build logs."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._lock = threading.Lock()
        self._asked: dict[Hashable, int] = {}
        self._building: set[Hashable] = set()

    def ask(self, key: Hashable, scope: str, build: Callable[[], object]) -> None:
        """One more search of ``scope`` that wanted the index and found none ready."""
        with self._lock:
            seen = self._asked[key] = self._asked.get(key, 0) + 1
            start = seen >= 2 and key not in self._building
            if start:
                self._building.add(key)
        if start:
            threading.Thread(
                target=self._run, args=(key, scope, build), name="kairox-ann", daemon=True
            ).start()

    def _run(self, key: Hashable, scope: str, build: Callable[[], object]) -> None:
        try:
            build()
        except Exception:
            log.warning("%s for %s not built", self._what, scope, exc_info=True)
        finally:
            with self._lock:
                self._building.discard(key)
