"""``kairox context``: what the model saw in a turn, and why."""

from __future__ import annotations

from pathlib import Path

import click

from kairox.app import bar_chart, trace_json
from kairox.cli.main import Context, cli, pass_ctx, run, workspace_option
from kairox.cli.render import echo_json
from kairox.core.errors import NotFound
from kairox.core.events import ContextAssembled


@cli.command()
@workspace_option
@click.option(
    "--session", metavar="NAME", help="Session name (default: 'main' for this workspace)."
)
@click.option("--turn", type=int, help="The turn (default: the last assembled one).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
def context(
    ctx: Context, workspace: Path, session: str | None, turn: int | None, as_json: bool
) -> None:
    """Show the context assembly of a turn: budget by source and every candidate item."""

    async def load() -> ContextAssembled | None:
        facade = ctx.facade
        name = session or await facade.sessions.default_name(workspace)
        await facade.sessions.resolve(name, workspace=workspace)
        return await facade.context.trace(name, turn)

    trace = run(load)
    if trace is None:
        name = session or "this workspace's default session"
        what = f"turn {turn} of session '{name}'" if turn is not None else f"'{name}'"
        raise NotFound("context assembly for", what)
    if as_json:
        echo_json(trace_json(trace))
        return
    click.echo(bar_chart(trace))
    click.echo()
    for item in trace.items:
        mark = "+" if item.included else "-"
        why = f"  ({item.reason})" if item.reason else ""
        cut = " [truncated]" if item.truncated else ""
        click.echo(f" {mark} {item.source.value:<15} {item.tokens:>7}  {item.ref}{cut}{why}")
