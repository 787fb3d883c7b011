"""``kairox compact``: summarise the oldest layer of a session's history now.

The request goes to the session's actor like any command, so it runs after a turn in progress;
the result is one line (or one JSON object) saying what the compaction did.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kairox.app import AppFacade, CompactionResult
from kairox.cli.chat_cmd import default_session_name
from kairox.cli.main import (
    Context,
    cli,
    model_option,
    run,
    session_option,
    wait_option,
    workspace_option,
)
from kairox.cli.render import echo_json


@cli.command()
@workspace_option
@session_option
@model_option
@wait_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def compact(
    ctx: Context,
    workspace: Path,
    session: str | None,
    model: str | None,
    wait: float,
    as_json: bool,
) -> None:
    """Compact a session now: summarise its oldest layer of history."""
    facade = AppFacade.open(ctx.home_arg, model=model, lease_wait_s=wait)
    try:
        name = session or default_session_name(facade, workspace)
        result = run(lambda: _compact(facade, name, workspace))
    finally:
        facade.close()
    if as_json:
        echo_json(
            {
                "session": name,
                "outcome": result.outcome,
                "reason": result.reason,
                "summary_seq": result.summary_seq,
                "from_seq": result.from_seq,
                "to_seq": result.to_seq,
                "tokens_before": result.tokens_before,
                "tokens_after": result.tokens_after,
            }
        )
    else:
        click.echo(describe(name, result))
    if result.outcome == "failed":
        sys.exit(1)


def describe(name: str, result: CompactionResult) -> str:
    """One line for a person."""
    if result.outcome in ("summarised", "fallback"):
        how = "summarised" if result.outcome == "summarised" else "dropped (fallback note)"
        line = (
            f"{name}: events {result.from_seq}-{result.to_seq} {how}: "
            f"{result.tokens_before} -> {result.tokens_after} tokens"
        )
        return line + (f" ({result.reason})" if result.reason else "")
    return f"{name}: compaction {result.outcome}: {result.reason}"


async def _compact(facade: AppFacade, name: str, workspace: Path) -> CompactionResult:
    try:
        # A clear error (not found, or where the name lives) before the actor starts.
        info = await facade.sessions.resolve(name, workspace=workspace)
        return await facade.chat.compact(info.id)
    finally:
        await facade.aclose()
