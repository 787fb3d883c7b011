"""Sessions as the surfaces see them: start, resume, list, archive, unarchive."""

from __future__ import annotations

from pathlib import Path

from kairox.core.aio import blocking, shielded
from kairox.core.config_load import load_config
from kairox.core.errors import InvalidInput, NotFound
from kairox.core.ids import workspace_id_for
from kairox.core.names import check_name
from kairox.services import Services
from kairox.store.sessions import SessionInfo

DEFAULT_SESSION = "main"


class SessionsArea:
    def __init__(self, services: Services) -> None:
        self._s = services

    async def start(self, name: str, *, workspace: str | Path, profile: str) -> SessionInfo:
        check_name(name, what="a session name")
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

    async def list(
        self, *, workspace: str | Path | None = None, include_archived: bool = False
    ) -> list[SessionInfo]:
        """Sessions, oldest first; archived ones only with ``include_archived``."""
        ws = workspace_id_for(workspace) if workspace is not None else None
        return await blocking(self._s.sessions.list, ws, include_archived=include_archived)

    async def archive(self, name: str) -> SessionInfo:
        """Archive ``name``: its session memories are discarded (an event each), its history
        stays in the log, it leaves the default list, and sending to it is refused."""
        return await shielded(self._s.sessions.archive, name, self._s.memories.discard_session)

    async def unarchive(self, name: str) -> SessionInfo:
        """Make ``name`` usable again (its discarded memories stay discarded)."""
        return await shielded(self._s.sessions.unarchive, name)

    async def default_name(self, workspace: str | Path) -> str:
        """The session a surface uses when none is named: ``main``, unless a session of that
        name already belongs to another workspace (session names are unique per home)."""
        ws_id = workspace_id_for(workspace)
        existing = await blocking(self._s.sessions.find, DEFAULT_SESSION)
        if existing is None or existing.workspace_id == ws_id:
            return DEFAULT_SESSION
        return f"{DEFAULT_SESSION}-{ws_id[3:11]}"
