"""Workspace trust as the surfaces see it: trust, revoke, and what a workspace's config ignored."""

from __future__ import annotations

from pathlib import Path

from kairox.core.config_load import ConfigCache
from kairox.core.trust import TrustStore, WorkspaceTrust


class TrustArea:
    def __init__(self, home: Path, configs: ConfigCache) -> None:
        self._configs = configs
        self._store = TrustStore(home)

    def status(self, workspace: Path) -> WorkspaceTrust:
        return self._store.status(workspace)

    def trust(self, workspace: Path) -> WorkspaceTrust:
        """Trust the workspace's current ``.kairox/config.toml`` (its content, by SHA-256)."""
        return self._store.trust(workspace)

    def revoke(self, workspace: Path) -> WorkspaceTrust:
        return self._store.revoke(workspace)

    def notice(self, workspace: Path) -> str | None:
        """The one-line warning for an untrusted workspace that sets protected keys, if any."""
        return self._configs.get(workspace).notice()
