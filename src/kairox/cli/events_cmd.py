"""``kairox events``: read the append-only log."""

from __future__ import annotations

from pathlib import Path

import click

from kairox.cli.main import Context, cli, pass_ctx, run, workspace_option
from kairox.cli.render import echo_json, event_json
from kairox.core.terminal import json_escaped


@cli.command()
@click.option(
    "--session", metavar="NAME", help="Only the events of the workspace's session with this name."
)
@workspace_option
@click.option("--after", type=int, default=0, show_default=True, help="Only events after this seq.")
@click.option("--limit", type=int, help="At most this many events.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--deltas",
    is_flag=True,
    help="Include the streamed ModelTokenDelta events (hidden by default).",
)
@pass_ctx
def events(
    ctx: Context,
    session: str | None,
    workspace: Path,
    after: int,
    limit: int | None,
    as_json: bool,
    deltas: bool,
) -> None:
    """Print events from the log, oldest first: the whole home's log, or only one workspace's
    events when --workspace is given (and one session's with --session). Streamed reply pieces
    (ModelTokenDelta) are left out unless --deltas."""
    source = click.get_current_context().get_parameter_source("workspace")
    explicit = source is click.core.ParameterSource.COMMANDLINE
    found = run(
        lambda: ctx.facade.events.list(
            session=session,
            workspace=workspace,
            after=after,
            limit=limit,
            in_workspace=explicit,
            deltas=deltas,
        )
    )
    if as_json:
        echo_json([event_json(e) for e in found])
        return
    for e in found:
        click.echo(f"{e.seq:>6}  {e.type:<28} {json_escaped(e.payload.model_dump_json())}")
