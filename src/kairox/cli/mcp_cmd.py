"""``kairox mcp``: serve memory and workspace search to other agents over MCP (stdio)."""

from __future__ import annotations

from pathlib import Path

import click

from kairox.app import AppFacade
from kairox.cli.main import Context, cli, pass_ctx, workspace_option


@cli.command()
@workspace_option
@click.option("--session", help="Bind session-scope memory to this session.")
@pass_ctx
def mcp(ctx: Context, workspace: Path, session: str | None) -> None:
    """Run the MCP server on stdin/stdout."""
    from kairox.mcp.server import build_server

    facade = AppFacade.open(ctx.home_arg)
    try:
        build_server(facade, workspace=workspace.resolve(), session=session).run("stdio")
    finally:
        facade.close()
