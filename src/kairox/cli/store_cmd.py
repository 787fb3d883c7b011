"""``kairox migrate --to postgresql://...``: copy this home's SQLite store into Postgres.

It shows a progress bar per table and ends with a count check (source rows, target rows). Running
it again copies nothing twice. Afterwards, point Kairox at the database with ``[store] url`` or
``$KAIROX_STORE_URL``.
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

from kairox.app import migrate_home
from kairox.cli.main import Context, cli, pass_ctx, run
from kairox.core.errors import StoreError


@cli.command()
@click.option(
    "--to",
    "url",
    required=True,
    metavar="URL",
    help="The Postgres database to copy into, e.g. postgresql://user:pw@host/kairox.",
)
@pass_ctx
def migrate(ctx: Context, url: str) -> None:
    """Copy this home's store (events, memories, sessions, chunks, vectors) into Postgres."""
    console = Console(stderr=True)
    tasks: dict[str, TaskID] = {}
    with Progress(
        TextColumn("{task.description:<18}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=False,
    ) as bar:

        def progress(table: str, done: int, total: int) -> None:
            if table not in tasks:  # an empty table reads 0/0, as the report below does
                tasks[table] = bar.add_task(table, total=total)
            bar.update(tasks[table], completed=done)

        report = run(lambda: migrate_home(ctx.home_arg, url, progress))
    table = Table("table", "source", "postgres", "copied now", "check")
    for count in report.counts:
        table.add_row(
            count.table,
            str(count.source),
            str(count.target),
            str(report.copied.get(count.table, 0)),
            "ok" if count.ok else "MISSING",
        )
    Console().print(table)
    if not report.ok:
        raise StoreError("the count check failed: some rows are missing in Postgres")
    click.echo('done: point Kairox at it with [store] url = "<URL>" or $KAIROX_STORE_URL')


__all__ = ["migrate"]
