"""``kairox mcp``: serve memory and workspace search to other agents over MCP (stdio)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from kairox.app import AppFacade
from kairox.cli.main import Context, cli, pass_ctx, run, workspace_option


@cli.command()
@workspace_option
@click.option(
    "--session",
    metavar="NAME",
    help="Bind session-scope memory to this session (created if new).",
)
@pass_ctx
def mcp(ctx: Context, workspace: Path, session: str | None) -> None:
    """Run the MCP server on stdin/stdout."""
    from kairox.mcp.server import build_server

    facade = AppFacade.open(ctx.home_arg)
    try:
        if session:
            run(lambda: facade.sessions.ensure(session, workspace=workspace.resolve()))
        build_server(facade, workspace=workspace.resolve(), session=session).run("stdio")
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM. The stdio transport reads stdin in a worker thread that no signal
        # can wake, and the interpreter would wait for it at exit: close the home, then leave.
        facade.close()
        click.echo("aborted", err=True)
        sys.stderr.flush()
        os._exit(130)
    finally:
        facade.close()
