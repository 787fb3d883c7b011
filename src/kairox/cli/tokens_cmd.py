"""``kairox tokens``: bearer tokens for ``kairox mcp --http`` (create, list, revoke).

A token is printed once, when created; only its SHA-256 is stored (in the store, so every server
on a shared Postgres store knows it). It is bound to the workspaces it names, and may be
read-only.
"""

from __future__ import annotations

from pathlib import Path

import click

from kairox.cli.main import Context, cli, pass_ctx, run
from kairox.cli.render import echo_json
from kairox.core.terminal import visible


@cli.group()
def tokens() -> None:
    """Bearer tokens for the shared MCP server (kairox mcp --http)."""


@tokens.command("create")
@click.argument("name")
@click.option(
    "--workspace",
    "workspaces",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A workspace the token may use (repeat for several; default: the current directory).",
)
@click.option("--read-only", is_flag=True, help="The token may read, never propose or change.")
@pass_ctx
def create(ctx: Context, name: str, workspaces: tuple[Path, ...], read_only: bool) -> None:
    """Create a token and print it (once: it is stored hashed)."""
    chosen = list(workspaces) or [Path.cwd()]
    info, secret = run(
        lambda: ctx.facade.tokens.create(name, workspaces=chosen, read_only=read_only)
    )
    rights = "read-only" if info.read_only else "read and propose"
    where = ", ".join(w.path for w in info.workspaces)
    click.echo(visible(f"token '{info.name}' ({rights}) for {where}:", one_line=True), err=True)
    click.echo(secret)
    click.echo(
        "Shown once: store it now. Clients send it as 'Authorization: Bearer TOKEN'.", err=True
    )


@tokens.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def list_(ctx: Context, as_json: bool) -> None:
    """List the tokens, their workspaces and when each was last used."""
    infos = run(ctx.facade.tokens.list)
    if as_json:
        echo_json(
            [
                {
                    "name": i.name,
                    "workspaces": [w.path for w in i.workspaces],
                    "read_only": i.read_only,
                    "created_at": i.created_at.isoformat(),
                    "last_used_at": i.last_used_at.isoformat() if i.last_used_at else None,
                }
                for i in infos
            ]
        )
        return
    if not infos:
        click.echo("no tokens; create one with `kairox tokens create NAME`")
        return
    click.echo(f"{'NAME':<20} {'RIGHTS':<10} {'LAST USED':<20} WORKSPACES")
    for i in infos:
        used = i.last_used_at.strftime("%Y-%m-%d %H:%M:%S") if i.last_used_at else "never"
        rights = "read" if i.read_only else "propose"
        paths = ", ".join(w.path for w in i.workspaces)
        click.echo(visible(f"{i.name:<20} {rights:<10} {used:<20} {paths}", one_line=True))


@tokens.command("revoke")
@click.argument("name")
@pass_ctx
def revoke(ctx: Context, name: str) -> None:
    """End a token: every server refuses it from now on."""
    info = run(lambda: ctx.facade.tokens.revoke(name))
    click.echo(f"revoked token '{info.name}'")
