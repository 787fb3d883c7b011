"""Sessions as the surfaces see them: start, resume, list, archive, unarchive.

A session name is resolved inside a workspace: every workspace has its own ``main`` (the default),
and a name that exists only in another workspace is an error that says where it lives. A session
id is unique in the home and is found from any workspace.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.app.facade import describe_model
from kairox.core.aio import blocking, shielded
from kairox.core.config_load import load_config
from kairox.core.errors import NotFound
from kairox.core.events import ModelCallStarted
from kairox.core.ids import looks_like_id, workspace_id_for
from kairox.core.names import check_session_name
from kairox.services import Services
from kairox.store.protocols import SessionStore
from kairox.store.records import SessionInfo

if TYPE_CHECKING:  # archiving goes through the runtime's session actor, loaded on first use
    from kairox.app.chat import ChatArea

DEFAULT_SESSION = "main"


def resolve_in(store: SessionStore, name: str, workspace: str | Path) -> SessionInfo:
    """The session ``name`` (or id) of ``workspace``. Another workspace's session, by id or by
    name, is not found, with the same error as a session nobody has (issue 33)."""
    found = store.find(name, workspace_id_for(workspace))
    if found is None:
        raise NotFound("session", name, by="name")
    return found


class SessionsArea:
    def __init__(self, services: Services, chat: Callable[[], ChatArea]) -> None:
        self._s = services
        self._chat = chat

    async def start(self, name: str, *, workspace: str | Path, profile: str) -> SessionInfo:
        check_session_name(name)
        return await shielded(self._s.sessions.start, name, workspace, profile)

    async def ensure(self, name: str, *, workspace: str | Path) -> SessionInfo:
        """The session ``name`` of ``workspace``, created (with the workspace's default profile)
        when it does not exist yet, as ``send`` does (names are per workspace: another
        workspace's session of that name is another session). A session id is never a new name:
        another workspace's id is ``NotFound``, like an id nobody has."""
        existing = await blocking(self._s.sessions.find, name, workspace_id_for(workspace))
        if existing is not None:
            return existing
        if looks_like_id(name, "ses"):  # an id names a session of this workspace, or none
            raise NotFound("session", name, by="name")
        loaded = await blocking(
            lambda: load_config(Path(workspace).resolve(), describe=describe_model)
        )
        return await self.start(name, workspace=workspace, profile=loaded.config.default_profile)

    async def resolve(self, name: str, *, workspace: str | Path) -> SessionInfo:
        """The session ``name`` of ``workspace`` (or the session with that id); another
        workspace's session is ``NotFound``, like one nobody has."""
        return await blocking(resolve_in, self._s.sessions, name, workspace)

    async def get(self, name_or_id: str, *, workspace: str | Path | None = None) -> SessionInfo:
        """The session with this id, or this name in ``workspace`` (without one, the name must
        be unique in the home)."""
        ws = workspace_id_for(workspace) if workspace is not None else None
        return await blocking(self._s.sessions.get, name_or_id, ws)

    async def list(
        self, *, workspace: str | Path | None = None, include_archived: bool = False
    ) -> list[SessionInfo]:
        """Sessions, oldest first; archived ones only with ``include_archived``. Each says the
        model that answered its latest turn (``answered_by``), which ``--model`` may have chosen
        over the profile's."""
        ws = workspace_id_for(workspace) if workspace is not None else None
        return await blocking(self._listed, ws, include_archived)

    def _listed(self, ws: str | None, include_archived: bool) -> builtins.list[SessionInfo]:
        found = self._s.sessions.list(ws, include_archived=include_archived)
        return [replace(s, answered_by=self._answered_by(s.id)) for s in found]

    def _answered_by(self, session_id: str) -> str | None:
        call = self._s.events.latest(session_id, "ModelCallStarted", where=("purpose", "reply"))
        return call.payload.model if call and isinstance(call.payload, ModelCallStarted) else None

    async def archive(self, name: str, *, workspace: str | Path | None = None) -> SessionInfo:
        """Archive the session: its session memories are discarded (an event each), its history
        stays in the log, it leaves the default list, and sending to it is refused. It goes
        through the session's queue and lease like compaction: after a turn running in this
        process, and ``SessionBusy`` while another process runs one (unless the facade waits)."""
        info = await self._target(name, workspace)
        if info.archived:
            return info
        return await self._chat().archive(info.id)

    async def unarchive(self, name: str, *, workspace: str | Path | None = None) -> SessionInfo:
        """Make the session usable again (its discarded memories stay discarded)."""
        info = await self._target(name, workspace)
        return await shielded(self._s.sessions.unarchive, info.id)

    async def default_name(self, workspace: str | Path) -> str:
        """The session a surface uses when none is named: ``main``, in every workspace."""
        del workspace
        return DEFAULT_SESSION

    async def _target(self, name: str, workspace: str | Path | None) -> SessionInfo:
        if workspace is None:
            return await self.get(name)
        return await self.resolve(name, workspace=workspace)
