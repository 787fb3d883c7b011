"""``kairox send``, ``sessions``, ``profile use`` and ``config show``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kairox.app import AppFacade, TurnDone, TurnOutcome
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
from kairox.cli.render import echo_json, refusal_line, untrusted_line
from kairox.cli.waiting import Waiting
from kairox.core.errors import KairoxError
from kairox.core.events import (
    AssistantMessageCompleted,
    EventPayload,
    MemoryExtractionFailed,
    ModelCallStarted,
    ModelNotice,
    ModelTokenDelta,
)
from kairox.core.repetition import finish_note
from kairox.core.terminal import visible
from kairox.core.types import MemoryStatus


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
        facade.chat.check_prompt(message)
        notice = facade.trust.notice(workspace)
        if notice:
            click.echo(notice, err=True)
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
                        "decision_reason": p.decision_reason,
                        "untrusted_inputs": [u.model_dump(mode="json") for u in p.untrusted_inputs],
                    }
                    for p in outcome.proposals
                ],
                "duplicates": [{"id": p.id, "key": p.key} for p in outcome.duplicates],
                "usage": outcome.usage.model_dump(),
                "finish_reason": outcome.finish_reason,
                "error": outcome.failure,
            }
        )
    else:
        for p in outcome.proposals:
            click.echo(
                f"memory {p.status.value}: [{p.scope.value}] {p.key or '-'}: "
                f"{visible(p.body, one_line=True)}  ({p.id})",
                err=True,
            )
            for note in (refusal_line(p), untrusted_line(p)):
                if note:
                    click.echo(f"  {note}", err=True)
            if p.status is MemoryStatus.PENDING:
                click.echo(
                    f"  approve with `kairox memory approve {p.id}` "
                    f"(or `kairox memory reject {p.id}`)",
                    err=True,
                )
        for p in outcome.duplicates:
            click.echo(
                f"already remembered ({p.status.value}): [{p.scope.value}] {p.key or '-'}  "
                f"({p.id}); nothing changed",
                err=True,
            )
    if outcome.failure:
        # The one-line error goes to stderr even with --json (stdout keeps the JSON object).
        click.echo(f"error: {visible(' '.join(outcome.failure.split()))}", err=True)
        sys.exit(1)


async def _send(
    facade: AppFacade, name: str, workspace: Path, profile: str | None, message: str, as_json: bool
) -> TurnOutcome:
    waiting = Waiting()
    try:
        await facade.chat.check_model(name, workspace=workspace, profile=profile)
        info = await facade.chat.open(name, workspace=workspace, profile=profile)
        outcome: TurnOutcome | None = None
        printed = ended = False
        async for update in facade.chat.send(info.id, message):
            if isinstance(update, TurnDone):
                outcome = update.outcome
            elif isinstance(update.payload, ModelCallStarted) and not (as_json or printed):
                if update.payload.purpose == "reply":
                    waiting.start(update.payload)  # until the first token
            elif isinstance(update.payload, ModelTokenDelta) and not as_json:
                await waiting.stop()
                printed = True
                click.echo(visible(update.payload.text), nl=False)
            elif not as_json and (line := _model_line(update.payload)) is not None:
                await waiting.stop()
                if printed and not ended:  # under the reply, after its last line
                    click.echo()
                    ended = True
                click.echo(visible(line), err=True)
        await waiting.stop()
        if not as_json and not ended:
            click.echo()
        assert outcome is not None
        return outcome
    finally:
        await waiting.stop()
        await facade.aclose()


def _model_line(payload: EventPayload) -> str | None:
    """The one line a cut reply, a failed extraction or a model notice adds (on stderr)."""
    if isinstance(payload, AssistantMessageCompleted):
        return finish_note(payload.finish_reason)
    if isinstance(payload, MemoryExtractionFailed):
        return f"memory extraction failed: {payload.reason}"
    if isinstance(payload, ModelNotice):
        return payload.text
    return None


@cli.group(invoke_without_command=True)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Only sessions of this workspace.",
)
@click.option("--all", "include_archived", is_flag=True, help="Include archived sessions.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def sessions(
    click_ctx: click.Context, workspace: Path | None, include_archived: bool, as_json: bool
) -> None:
    """List sessions (archived ones with --all), or archive and unarchive one."""
    if click_ctx.invoked_subcommand is not None:
        return
    ctx: Context = click_ctx.obj
    found = run(
        lambda: ctx.facade.sessions.list(workspace=workspace, include_archived=include_archived)
    )
    if as_json:
        echo_json(
            [
                {
                    "id": s.id,
                    "name": s.name,
                    "workspace_id": s.workspace_id,
                    "workspace_path": s.workspace_path,
                    "profile": s.profile,
                    "answered_by": s.answered_by,
                    "created_at": s.created_at.isoformat(),
                    "archived": s.archived,
                }
                for s in found
            ]
        )
        return
    if not found:
        archived = "" if include_archived else "; --all lists archived ones too"
        click.echo(f"no sessions (`kairox send MESSAGE` starts one{archived})")
        return
    click.echo(f"{'NAME':<20} {'PROFILE':<12} {'ANSWERED BY':<32} WORKSPACE")
    for s in found:
        mark = "  (archived)" if s.archived else ""
        model = visible(_short(s.answered_by or "-", 32), one_line=True)
        click.echo(f"{s.name:<20} {s.profile:<12} {model:<32} {s.workspace_path}{mark}")


def _short(text: str, width: int) -> str:
    """``text`` in ``width`` characters, its middle elided (a spec's path keeps its file name)."""
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep // 2] + "…" + text[len(text) - (keep - keep // 2) :]


@sessions.command("archive")
@click.argument("name")
@workspace_option
@wait_option
@click.pass_obj
def sessions_archive(ctx: Context, name: str, workspace: Path, wait: float) -> None:
    """Archive session NAME of the workspace: discard its session memories and refuse new turns
    (history stays). While another process runs the session it is refused ("session busy"),
    unless --wait lets it wait for the turn to end."""
    facade = AppFacade.open(ctx.home_arg, lease_wait_s=wait)

    async def go() -> str:
        try:
            return (await facade.sessions.archive(name, workspace=workspace)).name
        finally:
            await facade.aclose()

    try:
        archived = run(go)
    finally:
        facade.close()
    click.echo(f"session {archived} archived")


@sessions.command("unarchive")
@click.argument("name")
@workspace_option
@pass_ctx
def sessions_unarchive(ctx: Context, name: str, workspace: Path) -> None:
    """Make archived session NAME of the workspace usable again (its discarded memories stay
    discarded)."""
    info = run(lambda: ctx.facade.sessions.unarchive(name, workspace=workspace))
    click.echo(f"session {info.name} unarchived")


@cli.group()
def profile() -> None:
    """Model profiles."""


@profile.command("use")
@click.argument("alias")
@workspace_option
@click.option(
    "--session", metavar="NAME", help="Session name (default: 'main' for this workspace)."
)
@wait_option
@click.pass_obj
def profile_use(
    ctx: Context, alias: str, workspace: Path, session: str | None, wait: float
) -> None:
    """Switch a session to profile ALIAS (it waits for a running turn or compaction here, and
    with --wait for another process running the session)."""
    facade = AppFacade.open(ctx.home_arg, lease_wait_s=wait)

    async def go() -> tuple[str, str]:
        try:
            name = session or await facade.sessions.default_name(workspace)
            found = await facade.sessions.resolve(name, workspace=workspace)
            info = await facade.chat.switch_profile(found.id, alias)
            return name, info.profile
        finally:
            await facade.aclose()

    try:
        name, now = run(go)
    finally:
        facade.close()
    click.echo(f"session {name} now uses profile {now}")


@cli.group()
def config() -> None:
    """Configuration."""


@config.command("show")
@workspace_option
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def config_show(ctx: Context, workspace: Path, as_json: bool) -> None:
    """Print the merged config, where each value came from, and whether the workspace is trusted."""
    loaded = ctx.facade.config(workspace)
    data = loaded.config.model_dump(mode="json")
    rows: list[tuple[str, object, str]] = []

    def walk(prefix: str, value: object) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            rows.append((prefix, value, loaded.source_of(prefix)))

    walk("", data)
    for alias, profile in loaded.config.profiles.items():
        model_file = ctx.facade.models.local_file(profile.model)
        origin = ctx.facade.models.local_file_origin(profile.model)
        if model_file is not None and origin is not None:  # which GGUF the local model runs
            rows.append((f"profiles.{alias}.model_file", model_file, origin))
    trust = loaded.trust
    if trust is not None:
        where = str(trust.config_file) if trust.state != "none" else "no workspace config file"
        rows.append(("workspace_trust", trust.state, where))
        rows.append(("workspace_ignored", list(loaded.ignored), where))
    if as_json:
        echo_json([{"key": k, "value": v, "source": s} for k, v, s in rows])
        return
    for k, v, s in rows:
        click.echo(f"{k} = {v!r}  # {s}")
    if trust is not None:
        click.echo(f"# workspace config: {trust.describe()}")
    notice = loaded.notice()
    if notice:
        click.echo(notice, err=True)


@cli.command()
@click.argument(
    "path",
    required=False,
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option("--revoke", is_flag=True, help="Stop trusting the workspace.")
@pass_ctx
def trust(ctx: Context, path: Path | None, revoke: bool) -> None:
    """Trust PATH's .kairox/config.toml (default: the current directory) to choose endpoints,
    key variables, knowledge bases and embedders. Editing the file needs trusting again."""
    workspace = (path or Path.cwd()).resolve()
    area = ctx.facade.trust
    if revoke:
        state = area.revoke(workspace)
        click.echo(f"{workspace}: {state.describe()}")
        return
    state = area.trust(workspace)
    click.echo(f"trusted {state.config_file} as it is now; after an edit, trust it again")


__all__ = ["KairoxError", "config_show", "send", "sessions", "trust"]
