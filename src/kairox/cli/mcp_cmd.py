"""``kairox mcp``: serve memory, recall and workspace search to other agents over MCP.

On stdio by default (one client, this machine); with ``--http``, the streamable HTTP transport at
``/mcp`` for a team, every request carrying a token from ``kairox tokens create``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
        # Ctrl-C or SIGTERM. The stdio transport reads stdin in a worker thread that no signal
        # can wake, and the interpreter would wait for it at exit: close the home, then leave.
        facade.close()
        click.echo("aborted", err=True)
        sys.stderr.flush()
        os._exit(130)
    finally:
        if sock is not None:
            sock.close()
        facade.close()
