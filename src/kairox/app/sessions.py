"""Sessions as the surfaces see them: start, resume, list, switch profile."""

from __future__ import annotations

from pathlib import Path

from kairox.core.aio import blocking, shielded
from kairox.core.config_load import load_config
from kairox.core.errors import InvalidInput, NotFound
from kairox.core.ids import workspace_id_for
from kairox.runtime.services import Services
from kairox.store.sessions import SessionInfo

DEFAULT_SESSION = "main"


class SessionsArea:
    def __init__(self, services: Services) -> None:
        self._s = services

    async def start(self, name: str, *, workspace: str | Path, profile: str) -> SessionInfo:
        return await shielded(self._s.sessions.start, name, workspace, profile)

    async def ensure(self, name: str, *, workspace: str | Path) -> SessionInfo:
        """The session ``name`` of ``workspace``, created (with the workspace's default profile)
        when it does not exist yet, as ``send`` does."""
        existing = await blocking(self._s.sessions.find, name)
        if existing is not None:
            return existing
        loaded = await blocking(lambda: load_config(Path(workspace).resolve()))
        return await self.start(name, workspace=workspace, profile=loaded.config.default_profile)

    async def resolve(self, name: str, *, workspace: str | Path) -> SessionInfo:
        """The session ``name`` of ``workspace``; a name that lives in another workspace is an
        error that says where."""
        found = await blocking(self._s.sessions.find, name)
        if found is None:
            raise NotFound("session", name, by="name", hint="`kairox sessions` lists them")
        if found.workspace_id != workspace_id_for(workspace):
            raise InvalidInput(
                f"session '{name}' lives in workspace {found.workspace_path}, not this one; "
                f"run from there or pass --workspace {found.workspace_path}"
            )
        return found

    async def get(self, name: str) -> SessionInfo:
        return await blocking(self._s.sessions.get, name)

    async def list(self, *, workspace: str | Path | None = None) -> list[SessionInfo]:
        ws = workspace_id_for(workspace) if workspace is not None else None
        return await blocking(self._s.sessions.list, ws)

    async def default_name(self, workspace: str | Path) -> str:
        """The session a surface uses when none is named: ``main``, unless a session of that
        name already belongs to another workspace (session names are unique per home)."""
        ws_id = workspace_id_for(workspace)
        existing = await blocking(self._s.sessions.find, DEFAULT_SESSION)
        if existing is None or existing.workspace_id == ws_id:
            return DEFAULT_SESSION
        return f"{DEFAULT_SESSION}-{ws_id[3:11]}"
