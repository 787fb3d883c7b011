"""``kairox mcp``: serve memory, recall and workspace search to other agents over MCP.

On stdio by default (one client, this machine); with ``--http``, the streamable HTTP transport at
``/mcp`` for a team, every request carrying a token from ``kairox tokens create``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

import click

from kairox.app import AppFacade
from kairox.cli.main import Context, cli, pass_ctx, run, workspace_option
from kairox.core.terminal import visible


@cli.command()
@workspace_option
@click.option(
    "--session",
    metavar="NAME",
    help="Bind session-scope memory to this session (created if new).",
)
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP at /mcp (needs tokens).")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="With --http: the address to bind; anything but loopback needs --allow-remote.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8766,
    show_default=True,
    help="With --http: the port (0 picks a free one).",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="With --http: allow a non-loopback --host. Without TLS, tokens and memories cross "
    "the network in clear: put it behind a TLS proxy.",
)
@pass_ctx
def mcp(
    ctx: Context,
    workspace: Path,
    session: str | None,
    http: bool,
    host: str,
    port: int,
    allow_remote: bool,
) -> None:
    """Run the MCP server on stdin/stdout, or over HTTP with --http."""
    import anyio

    from kairox.core.net import bind, is_loopback
    from kairox.mcp.server import build_server

    root = workspace.resolve()
    sock = bind(host, port, allow_remote=allow_remote, what="the MCP server") if http else None
    facade = AppFacade.open(ctx.home_arg)
    try:
        if session:
            run(lambda: facade.sessions.ensure(session, workspace=root))
        server = build_server(facade, workspace=root, session=session)
        if sock is None:
            _leave_on_signal(facade)
            anyio.run(server.run_stdio_async)
            return
        from kairox.mcp.http import build_app, gate_for, serve_http, server_url

        gate = gate_for(sock, host, root)
        app = build_app(server, facade, gate=gate)
        if not is_loopback(host):
            click.echo(
                f"warning: serving MCP on {host} without TLS: bearer tokens and memories cross "
                "the network in clear; put it behind a TLS proxy (see docs/mcp.md)",
                err=True,
            )
        click.echo(visible(f"Kairox MCP server for {root}", one_line=True))
        click.echo(f"URL: {server_url(host, gate.port)}", nl=True)
        click.echo("Press Ctrl+C to stop.", err=True)
        anyio.run(serve_http, app, sock)
    except KeyboardInterrupt:
        if sock is not None:
            return  # the HTTP server stopped; the home is closed below
        _close_then_exit(facade)
    finally:
        if sock is not None:
            sock.close()
        facade.close()


CLOSE_WAIT_S = 10.0
"""How long leaving on a signal waits for the home to close (a call in flight holding it)."""


def _leave_on_signal(facade: AppFacade) -> None:
    """The stdio server leaves at once on SIGTERM or Ctrl-C. Its transport reads stdin in a
    worker thread that no signal can wake, and the event loop's shutdown, then the interpreter's,
    would wait for it: the home is closed and the process exits from the handler."""

    def leave(signum: int, frame: FrameType | None) -> None:
        _close_then_exit(facade)

    signal.signal(signal.SIGTERM, leave)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, leave)


def _close_then_exit(facade: AppFacade) -> None:
    """Close the home (committed events and memories are on disk; an open transaction rolls
    back), waiting at most ``CLOSE_WAIT_S`` for a call that holds it, then exit with 130."""
    closer = threading.Thread(target=facade.close, name="kairox-close", daemon=True)
    closer.start()
    closer.join(CLOSE_WAIT_S)
    click.echo("aborted", err=True)
    sys.stderr.flush()
    os._exit(130)
