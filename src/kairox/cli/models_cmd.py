"""``kairox models list|pull|remove``: local GGUF models in the home."""

from __future__ import annotations

import click

from kairox.cli.main import Context, cli, pass_ctx, run
from kairox.cli.render import echo_json
from kairox.core.terminal import visible


@cli.group()
def models() -> None:
    """Local GGUF models: the known ones, pull one, remove one."""


@models.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
def list_(ctx: Context, as_json: bool) -> None:
    """Known and pulled models; `local` runs the one marked with *."""
    found = ctx.facade.models.list()
    if as_json:
        echo_json([m.to_json() for m in found])
        return
    for m in found:
        mark = "*" if m.used_by_local else " "
        state = "pulled" if m.path and m.url else ("bundled" if m.path else "not pulled")
        size = f"{m.size / 1e6:,.0f} MB" if m.size else "-"
        memory = "proposes memories" if m.follows_protocol else "demo: no memories"
        line = f"{mark} {m.name:<30} {state:<10} {size:>7}  {m.licence:<10} {memory}"
        click.echo(visible(line, one_line=True))
        if m.path:
            click.echo(visible(f"  {m.path}", one_line=True))


@models.command()
@click.argument("name")
@click.option("--url", help="Download this GGUF instead (any model not in the list).")
@click.option("--sha256", "sha256", metavar="HEX", help="The file's expected SHA-256.")
@pass_ctx
def pull(ctx: Context, name: str, url: str | None, sha256: str | None) -> None:
    """Download model NAME into the home: resumable, verified by SHA-256, then `local:NAME`."""
    from rich.console import Console  # loads with this command only
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TransferSpeedColumn,
    )

    with Progress(
        TextColumn(f"pulling {visible(name, one_line=True)}", markup=False),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("pull", total=None)

        def on_progress(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)

        report = run(
            lambda: ctx.facade.models.pull(name, url=url, sha256=sha256, progress=on_progress)
        )
    if report.already:
        click.echo(visible(f"{name} is already pulled and verified: {report.path}"))
        return
    resumed = f", resumed at {report.resumed_from:,} bytes" if report.resumed_from else ""
    click.echo(
        visible(f"pulled {name} ({report.size:,} bytes, SHA-256 verified{resumed}): {report.path}")
    )
    click.echo(
        visible(f"use it with --model local:{name} (plain `local` uses the best pulled model)")
    )


@models.command()
@click.argument("name")
@pass_ctx
def remove(ctx: Context, name: str) -> None:
    """Delete pulled model NAME from the home."""
    removed = ctx.facade.models.remove(name)
    click.echo(visible(f"removed {name} ({len(removed)} files)"))
