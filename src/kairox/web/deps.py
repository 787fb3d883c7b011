"""What every route needs: the facade, the server's workspace and its secrets, as one dependency.

Routes take ``Ctx`` and call the facade; they keep no state of their own beyond futures of
queued work, which are held here so they are not garbage-collected while they run.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request

from kairox.app import AppFacade
from kairox.core.errors import KairoxError
from kairox.core.ids import workspace_id_for
from kairox.web.models import SessionOut
from kairox.web.security import SecurityConfig

log = logging.getLogger("kairox.web")


@dataclass
class WebContext:
    facade: AppFacade
    workspace: Path
    security: SecurityConfig
    heartbeat_s: float = 15.0
    poll_s: float = 0.2
    _background: set[asyncio.Future[Any]] = field(default_factory=set)

    @property
    def workspace_id(self) -> str:
        return workspace_id_for(self.workspace)

    def keep(self, future: asyncio.Future[Any]) -> None:
        """Hold a queued command until it finishes, and log a failure nobody awaited."""
        self._background.add(future)

        def done(f: asyncio.Future[Any]) -> None:
            self._background.discard(f)
            if f.cancelled():
                return
            exc = f.exception()
            if isinstance(exc, KairoxError):
                log.warning("queued command failed: %s", exc)
            elif exc is not None:
                log.error("queued command failed", exc_info=exc)

        future.add_done_callback(done)

    async def session(self, name: str) -> SessionOut:
        """The session ``name`` (or id) of this server's workspace; another workspace's session
        is 404, by id or by name, and the error does not say where it lives."""
        info = await self.facade.sessions.resolve(name, workspace=self.workspace)
        return SessionOut.of(info)


def web_context(request: Request) -> WebContext:
    ctx = request.app.state.kairox
    assert isinstance(ctx, WebContext)
    return ctx


Ctx = Annotated[WebContext, Depends(web_context)]

__all__ = ["Ctx", "WebContext", "web_context"]
