"""``kairox memory ...``: list, show, decide, edit, delete, history and undo memories."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import click

from kairox.cli.main import Context, cli, pass_ctx, run, workspace_option
from kairox.cli.render import (
    MEMORY_HEADER,
    echo_json,
    memory_detail,
    memory_line,
    refusal_line,
)
from kairox.core.records import MemoryRecord, version_label
from kairox.core.terminal import visible
from kairox.core.types import MemoryScope, MemoryStatus


@cli.group()
def memory() -> None:
    """See, search and change what Kairox remembers."""


@memory.command("list")
@click.option("--scope", "scope", help="session, user or workspace.")
@click.option(
    "--status",
    "status",
    help="pending, accepted, rejected, deleted or all (default: accepted and pending).",
)
@workspace_option
@click.option("--session", metavar="NAME", help="Include this session's session memories.")
@click.option("--all-sessions", is_flag=True, help="Include session memories of every session.")
@click.option("--search", "text", help="Only memories matching this text by meaning, best first.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
def list_(
    ctx: Context,
    scope: str | None,
    status: str | None,
    workspace: Path,
    session: str | None,
    all_sessions: bool,
    text: str | None,
    as_json: bool,
) -> None:
    """List the memories of a workspace, the user, and optionally a session."""
    scopes = [MemoryScope.parse(scope)] if scope else None
    statuses = _statuses(status)
    records = run(
        lambda: ctx.facade.memory.list(
            workspace=workspace,
            session=session,
            scopes=scopes,
            statuses=statuses,
            text=text,
            all_sessions=all_sessions,
        )
    )
    if as_json:
        echo_json([r.to_json() for r in records])
        return
    if not records:
        click.echo("no memories")
        return
    click.echo(MEMORY_HEADER)
    for record in records:
        click.echo(memory_line(record))
        if record.replaces_body is not None and not record.forget:
            click.echo(f"{'':<28}replaces: {visible(record.replaces_body, one_line=True)}")
        refused = refusal_line(record)
        if refused:
            click.echo(f"{'':<28}{refused}")


@memory.command("search")
@click.argument("query")
@click.option("--scope", "scope", help="session, user or workspace.")
@click.option("--k", "k", type=int, default=10, show_default=True, help="How many memories.")
@workspace_option
@click.option("--session", metavar="NAME", help="Include this session's session memories.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: a record and a score each.")
@pass_ctx
def search(
    ctx: Context,
    query: str,
    scope: str | None,
    k: int,
    workspace: Path,
    session: str | None,
    as_json: bool,
) -> None:
    """Find memories by meaning: those containing QUERY first, then the ranker's best."""
    scopes = [MemoryScope.parse(scope)] if scope else None
    hits = run(
        lambda: ctx.facade.memory.search(
            query, workspace=workspace, session=session, scopes=scopes, k=k
        )
    )
    if as_json:
        echo_json([h.to_json() for h in hits])
        return
    if not hits:
        click.echo("no memories match")
        return
    click.echo(f"SCORE  {MEMORY_HEADER}")
    for hit in hits:
        click.echo(f"{hit.score:.2f}   {memory_line(hit.record)}")


def _statuses(status: str | None) -> list[MemoryStatus] | None:
    if status == "all":
        return None
    if status is None:
        return [MemoryStatus.ACCEPTED, MemoryStatus.PENDING]
    return [MemoryStatus.parse(status)]


def _print(record: MemoryRecord, as_json: bool) -> None:
    if as_json:
        echo_json(record.to_json())
        return
    click.echo(memory_line(record))
    if record.replaces_body is not None and not record.forget:
        replaced = visible(record.replaces_body, one_line=True)
        click.echo(f"replaces: {replaced}  (approving makes a new version of it)")


@memory.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def show(ctx: Context, memory_id: str, as_json: bool) -> None:
    """Show one memory with its provenance."""
    record = run(lambda: ctx.facade.memory.show(memory_id))
    if as_json:
        echo_json(record.to_json())
        return
    for line in memory_detail(record):
        click.echo(line)


@memory.command()
@click.argument("memory_id")
@click.option("--body", help="Approve with this body instead of the proposed one.")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def approve(ctx: Context, memory_id: str, body: str | None, as_json: bool) -> None:
    """Approve a pending proposal."""
    _print(run(lambda: ctx.facade.memory.approve(memory_id, body=body)), as_json)


@memory.command()
@click.argument("memory_id")
@click.option("--reason", default="rejected by the user")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def reject(ctx: Context, memory_id: str, reason: str, as_json: bool) -> None:
    """Reject a pending proposal."""
    _print(run(lambda: ctx.facade.memory.reject(memory_id, reason=reason)), as_json)


@memory.command()
@click.argument("memory_id")
@click.option("--body", required=True, help="The new body.")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def edit(ctx: Context, memory_id: str, body: str, as_json: bool) -> None:
    """Replace a memory's body; the old body stays in its history."""
    _print(run(lambda: ctx.facade.memory.edit(memory_id, body)), as_json)


@memory.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def delete(ctx: Context, memory_id: str, as_json: bool) -> None:
    """Delete a memory (undo brings it back)."""
    _print(run(lambda: ctx.facade.memory.delete(memory_id)), as_json)


@memory.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def undo(ctx: Context, memory_id: str, as_json: bool) -> None:
    """Undo the latest edit or delete of a memory."""
    _print(run(lambda: ctx.facade.memory.undo(memory_id)), as_json)


@memory.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def history(ctx: Context, memory_id: str, as_json: bool) -> None:
    """Every version of a memory, oldest first."""
    versions = run(lambda: ctx.facade.memory.history(memory_id))
    if as_json:
        echo_json([v.to_json() for v in versions])
        return
    for v in versions:
        mark = " (undone)" if v.undone else ""
        label = version_label(v.version, v.status)
        click.echo(
            f"{label:<3} {v.action:<8} {v.status.value:<8} {v.actor.value:<6} "
            f"{visible(v.body, one_line=True)}{mark}"
        )
        if v.reason:
            click.echo(f"    reason: {visible(v.reason, one_line=True)}")


@memory.command("export")
@workspace_option
@click.option(
    "--format", "fmt", type=click.Choice(["json", "markdown"]), default="json", show_default=True
)
@click.option("--status", "status", help="Only memories with this status.")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of stdout.",
)
@pass_ctx
def export(
    ctx: Context,
    workspace: Path,
    fmt: Literal["json", "markdown"],
    status: str | None,
    output: Path | None,
) -> None:
    """Export the workspace's and the user's memories as JSON or Markdown."""
    statuses = [MemoryStatus.parse(status)] if status else None
    text = run(lambda: ctx.facade.memory.export(workspace=workspace, fmt=fmt, statuses=statuses))
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        output.write_text(text)


@memory.command("import")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@workspace_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "markdown"]),
    help="Default: from the file's extension.",
)
@pass_ctx
def import_(
    ctx: Context, source: Path, workspace: Path, fmt: Literal["json", "markdown"] | None
) -> None:
    """Import memories from a JSON or Markdown export; every change is an event."""
    from rich.console import Console  # loads with this command, not with every memory command
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    chosen: Literal["json", "markdown"] = fmt or (
        "markdown" if source.suffix.lower() in (".md", ".markdown") else "json"
    )
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("importing", total=None)

        def on_progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        def on_index(done: int, total: int) -> None:
            bar.update(task, description="indexing", completed=done, total=total)

        report = run(
            lambda: ctx.facade.memory.import_(
                source.read_bytes(),
                workspace=workspace,
                fmt=chosen,
                progress=on_progress,
                index_progress=on_index,
            )
        )
    click.echo(
        f"created {len(report.created)}, replaced {len(report.replaced)}, "
        f"pending {len(report.pending)}, unchanged {len(report.unchanged)}, "
        f"skipped {len(report.skipped)}"
    )
    for skipped in report.skipped:
        click.echo(f"  skipped: {skipped.describe()}", err=True)
