"""``kairox serve``: start the local web UI and print the URL (with its access token) to open.

It binds 127.0.0.1 unless ``--host`` names another address *and* ``--allow-remote`` is given, in
which case it warns. FastAPI and uvicorn come from the ``web`` extra and load only here.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import click

from kairox.app.facade import describe_model
from kairox.cli.main import Context, cli, pass_ctx, workspace_option
from kairox.core.config_load import load_config
from kairox.core.paths import resolve_home


@cli.command()
@workspace_option
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; anything but loopback needs --allow-remote.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a non-loopback --host. Anyone who can reach it and has the token "
    "gets full access to your memories.",
)
@click.option("--model", help="Override the model of every session, e.g. scripted:PATH.")
@pass_ctx
def serve(
    ctx: Context, workspace: Path, port: int, host: str, allow_remote: bool, model: str | None
) -> None:
    """Serve the web UI: chat with memory cards, the memory browser and the context inspector."""
    # Raises MissingExtra (naming the ``web`` extra) when FastAPI or uvicorn is missing.
    from kairox.web.server import ServerOptions, is_loopback, prepare
    from kairox.web.server import serve as run_server

    options = ServerOptions(
        workspace=workspace,
        host=host,
        port=port,
        allow_remote=allow_remote,
        home=ctx.home_arg,
        model=model,
    )
    prepared = prepare(options)
    ignored = load_config(
        workspace.resolve(), home=resolve_home(ctx.home_arg), describe=describe_model
    ).notice()
    if ignored:
        click.echo(ignored, err=True)
    if not is_loopback(host):
        click.echo(
            f"warning: listening on {host}, reachable from other machines; anyone with the "
            "token below can read and change your memories",
            err=True,
        )
    click.echo(f"Kairox web UI for {workspace.expanduser().resolve()}")
    click.echo(f"Open: {prepared.url}")
    click.echo("Press Ctrl+C to stop.", err=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run_server(options, prepared))


__all__ = ["serve"]
