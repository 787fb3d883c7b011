"""``kairox send``, ``sessions``, ``profile use`` and ``config show``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kairox.app import AppFacade
from kairox.app.chat import TurnDone
from kairox.cli.main import (
    Context,
    cli,
    model_option,
    pass_ctx,
    profile_option,
    run,
    session_option,
    wait_option,
    workspace_option,
)
from kairox.cli.render import echo_json
from kairox.cli.waiting import Waiting
from kairox.core.config_load import load_config
from kairox.core.errors import KairoxError
from kairox.core.events import ModelCallStarted, ModelTokenDelta
from kairox.runtime.turn import TurnOutcome


def default_session_name(facade: AppFacade, workspace: Path) -> str:
    """The facade's default session for ``workspace``, for commands run without --session."""
    return run(lambda: facade.sessions.default_name(workspace))


@cli.command()
@workspace_option
@session_option
@profile_option
@model_option
@wait_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end.")
@click.argument("message")
@click.pass_obj
def send(
    ctx: Context,
    workspace: Path,
    session: str | None,
    profile: str | None,
    model: str | None,
    wait: float,
    as_json: bool,
    message: str,
) -> None:
    """Send MESSAGE and stream the visible reply."""
    facade = AppFacade.open(ctx.home_arg, model=model, lease_wait_s=wait)
    try:
        name = session or default_session_name(facade, workspace)
        outcome = run(lambda: _send(facade, name, workspace, profile, message, as_json))
    finally:
        facade.close()
    if as_json:
        echo_json(
            {
                "session": name,
                "reply": outcome.reply,
                "proposals": [
                    {
                        "id": p.id,
                        "scope": p.scope.value,
                        "key": p.key,
                        "status": p.status.value,
                        "body": p.body,
                    }
                    for p in outcome.proposals
                ],
                "usage": outcome.usage.model_dump(),
                "error": outcome.failure,
            }
        )
    else:
        for p in outcome.proposals:
            click.echo(
                f"memory {p.status.value}: [{p.scope.value}] {p.key or '-'}: {p.body}  ({p.id})",
                err=True,
            )
    if outcome.failure:
        if not as_json:
            click.echo(f"error: {outcome.failure}", err=True)
        sys.exit(1)


async def _send(
    facade: AppFacade, name: str, workspace: Path, profile: str | None, message: str, as_json: bool
) -> TurnOutcome:
    waiting = Waiting()
    try:
        await facade.chat.open(name, workspace=workspace, profile=profile)
        outcome: TurnOutcome | None = None
        printed = False
        async for update in facade.chat.send(name, message):
            if isinstance(update, TurnDone):
                outcome = update.outcome
            elif isinstance(update.payload, ModelCallStarted) and not (as_json or printed):
                if update.payload.purpose == "reply":
                    waiting.start(update.payload)  # until the first token
            elif isinstance(update.payload, ModelTokenDelta) and not as_json:
                await waiting.stop()
                printed = True
                click.echo(update.payload.text, nl=False)
        await waiting.stop()
        if not as_json:
            click.echo()
        assert outcome is not None
        return outcome
    finally:
        await waiting.stop()
        await facade.aclose()


@cli.command()
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Only sessions of this workspace.",
)
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def sessions(ctx: Context, workspace: Path | None, as_json: bool) -> None:
    """List sessions."""
    found = run(lambda: ctx.facade.sessions.list(workspace=workspace))
    if as_json:
        echo_json(
            [
                {
                    "id": s.id,
                    "name": s.name,
                    "workspace_id": s.workspace_id,
                    "workspace_path": s.workspace_path,
                    "profile": s.profile,
                    "created_at": s.created_at.isoformat(),
                }
                for s in found
            ]
        )
        return
    for s in found:
        click.echo(f"{s.name:<20} {s.profile:<12} {s.workspace_path}")


@cli.group()
def profile() -> None:
    """Model profiles."""


@profile.command("use")
@click.argument("alias")
@click.option("--session", required=True, help="The session to switch.")
@pass_ctx
def profile_use(ctx: Context, alias: str, session: str) -> None:
    """Switch SESSION to profile ALIAS (it waits for a running turn or compaction)."""

    async def go() -> str:
        try:
            info = await ctx.facade.chat.switch_profile(session, alias)
            return info.profile
        finally:
            await ctx.facade.aclose()

    click.echo(f"session {session} now uses profile {run(go)}")


@cli.group()
def config() -> None:
    """Configuration."""


@config.command("show")
@workspace_option
@click.option("--json", "as_json", is_flag=True)
def config_show(workspace: Path, as_json: bool) -> None:
    """Print the merged config and where each value came from."""
    loaded = load_config(workspace)
    data = loaded.config.model_dump(mode="json")
    rows: list[tuple[str, object, str]] = []

    def walk(prefix: str, value: object) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            rows.append((prefix, value, loaded.source_of(prefix)))

    walk("", data)
    if as_json:
        echo_json([{"key": k, "value": v, "source": s} for k, v, s in rows])
        return
    for k, v, s in rows:
        click.echo(f"{k} = {v!r}  # {s}")


__all__ = ["KairoxError", "config_show", "send", "sessions"]
