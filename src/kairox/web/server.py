"""Running the web UI: bind a socket (loopback unless told otherwise), open the facade, serve.

The socket is bound before uvicorn starts, so the printed URL carries the real port even when
port 0 asks the system for a free one. ``WebServer`` runs the same thing in a thread for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn

from kairox.app import AppFacade
from kairox.core.errors import KairoxError
from kairox.core.net import bind, host_names, is_loopback
from kairox.web.deps import WebContext
from kairox.web.security import SecurityConfig

log = logging.getLogger("kairox.web")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


@dataclass
class ServerOptions:
    workspace: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    allow_remote: bool = False
    home: str | Path | None = None
    model: str | None = None
    heartbeat_s: float = 15.0
    poll_s: float = 0.2
    log_level: str = "warning"


@dataclass
class Prepared:
    """A bound socket and the secrets of this run; ``url`` is what the user opens."""

    sock: socket.socket
    security: SecurityConfig
    host: str
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    @property
    def url(self) -> str:
        shown = self.host.strip("[]")
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{self.port}/?token={self.security.token}"


def prepare(options: ServerOptions) -> Prepared:
    sock = bind(options.host, options.port, allow_remote=options.allow_remote)
    port = int(sock.getsockname()[1])
    extra = () if is_loopback(options.host) else host_names(options.host)
    return Prepared(
        sock=sock, security=SecurityConfig(port=port, extra_hosts=extra), host=options.host
    )


class _Server(uvicorn.Server):
    """uvicorn's server, telling a waiting thread when it accepts connections."""

    def __init__(self, config: uvicorn.Config, started: threading.Event | None) -> None:
        super().__init__(config)
        self._started_event = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self._started_event is not None:
            self._started_event.set()


async def serve(
    options: ServerOptions,
    prepared: Prepared,
    *,
    started: threading.Event | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until interrupted (or ``stop`` is set); the facade is closed on the way out."""
    from kairox.web.app import create_app

    facade = AppFacade.open(options.home, model=options.model)
    try:
        ctx = WebContext(
            facade=facade,
            workspace=options.workspace.expanduser().resolve(),
            security=prepared.security,
            heartbeat_s=options.heartbeat_s,
            poll_s=options.poll_s,
        )
        config = uvicorn.Config(
            create_app(ctx),
            log_level=options.log_level,
            timeout_graceful_shutdown=1,
            lifespan="off",
        )
        server = _Server(config, started)
        # The embedded model loads while the server starts, and stays loaded for every turn.
        preloading = asyncio.create_task(_preload(facade, ctx.workspace))
        watcher = asyncio.create_task(_stop_when(server, stop)) if stop is not None else None
        try:
            await server.serve(sockets=[prepared.sock])
        finally:
            preloading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await preloading
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            await facade.aclose()
    finally:
        facade.close()
        prepared.sock.close()


async def _preload(facade: AppFacade, workspace: Path) -> None:
    try:
        await facade.chat.preload(workspace)
    except KairoxError as exc:  # a bad config shows up on the first turn, with the fix
        log.warning("the model was not preloaded: %s", exc)


async def _stop_when(server: uvicorn.Server, stop: asyncio.Event) -> None:
    await stop.wait()
    server.should_exit = True


class WebServer:
    """The server in a background thread with its own event loop (for tests and embedding)."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.prepared = prepare(options)
        self._started = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kairox-web", daemon=True)

    @property
    def url(self) -> str:
        return self.prepared.url

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.prepared.port}"

    @property
    def token(self) -> str:
        return self.prepared.security.token

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            await serve(self.options, self.prepared, started=self._started, stop=self._stop)

        try:
            asyncio.run(main())
        except BaseException as exc:
            self._error = exc
            self._started.set()

    def start(self, timeout_s: float = 30.0) -> WebServer:
        self._thread.start()
        if not self._started.wait(timeout_s):
            raise RuntimeError("the web server did not start in time")
        if self._error is not None:
            raise RuntimeError(f"the web server failed to start: {self._error}")
        return self

    def stop(self, timeout_s: float = 30.0) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout_s)

    def __enter__(self) -> WebServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "Prepared",
    "ServerOptions",
    "WebServer",
    "bind",
    "is_loopback",
    "prepare",
    "serve",
]
