"""``kairox context``: what the model saw in a turn, and why."""

from __future__ import annotations

from pathlib import Path

import click

from kairox.app import bar_chart, trace_json
from kairox.cli.main import Context, cli, pass_ctx, run, workspace_option
from kairox.cli.render import echo_json
from kairox.core.errors import NotFound
from kairox.core.events import ContextAssembled
from kairox.core.messages import ChatMessage
from kairox.core.terminal import visible


def message_label(message: ChatMessage) -> str:
    """``system``, ``user``, ``tool (name)``: the role line above each message of ``--show``."""
    return f"{message.role} ({message.name})" if message.name else message.role


@cli.command()
@workspace_option
@click.option(
    "--session", metavar="NAME", help="Session name (default: 'main' for this workspace)."
)
@click.option("--turn", type=int, help="The turn (default: the last assembled one).")
@click.option(
    "--show", is_flag=True, help="Print the exact messages the model was sent (the replay)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
def context(
    ctx: Context, workspace: Path, session: str | None, turn: int | None, show: bool, as_json: bool
) -> None:
    """Show the context assembly of a turn: budget by source and every candidate item."""

    async def load() -> tuple[str, ContextAssembled | None]:
        facade = ctx.facade
        name = session or await facade.sessions.default_name(workspace)
        info = await facade.sessions.resolve(name, workspace=workspace)
        return info.id, await facade.context.trace(info.id, turn)

    resolved, trace = run(load)
    if trace is None:
        name = session or "this workspace's default session"
        what = f"turn {turn} of session '{name}'" if turn is not None else f"'{name}'"
        raise NotFound("context assembly for", what)
    if show:
        messages = run(lambda: ctx.facade.context.replay(resolved, trace.turn))
        if as_json:
            echo_json([m.model_dump(mode="json", exclude_defaults=True) for m in messages])
            return
        click.echo(f"turn {trace.turn} · {trace.model} · {len(messages)} messages")
        for index, message in enumerate(messages, 1):
            click.echo(f"\n--- {index} {message_label(message)} ---")
            click.echo(visible(message.content))
            for call in message.tool_calls:
                click.echo(visible(f"[tool call {call.name} {call.arguments}]", one_line=True))
        return
    if as_json:
        echo_json(trace_json(trace))
        return
    click.echo(bar_chart(trace))
    click.echo()
    for item in trace.items:
        mark = "+" if item.included else "-"
        why = f"  ({item.reason})" if item.reason else ""
        cut = " [truncated]" if item.truncated else ""
        label = visible(item.label, one_line=True)
        click.echo(f" {mark} {item.source.value:<15} {item.tokens:>7}  {label}{cut}{why}")
        if item.untrusted_inputs:
            refs = visible(", ".join(u.describe() for u in item.untrusted_inputs), one_line=True)
            click.echo(f"     ⚠ carries untrusted input ({refs})")
