"""``kairox index``, ``kairox search`` and ``kairox kb list|add|search``."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kairox.app import ChunksEmbedded, FileProcessed, IndexEvent, RetrievalHit, WalkFinished
from kairox.cli.main import Context, cli, pass_ctx, run, workspace_option
from kairox.cli.render import echo_json
from kairox.core.terminal import visible


def hit_json(hit: RetrievalHit) -> dict[str, object]:
    return {
        "source": hit.source,
        "chunk_id": hit.chunk_id,
        "path": hit.path,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "score": round(hit.score, 6),
        "title": hit.title,
        "snippet": _snippet(hit.text),
    }


def _snippet(text: str, width: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_hits(hits: list[RetrievalHit]) -> None:
    if not hits:
        click.echo("no results")
    for hit in hits:
        where = hit.path or hit.title or hit.chunk_id
        lines = f":{hit.start_line}-{hit.end_line}" if hit.start_line is not None else ""
        click.echo(f"{hit.score:6.3f}  {hit.source}  {visible(where, one_line=True)}{lines}")
        click.echo(f"        {visible(_snippet(hit.text), one_line=True)}")


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@pass_ctx
def index(ctx: Context, path: Path | None, as_json: bool) -> None:
    """Index a workspace (default: the current directory) for retrieval."""
    root = (path or Path.cwd()).resolve()
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=as_json,
    ) as progress:
        files = progress.add_task("scanning", total=None)
        embed = progress.add_task("embedding", total=None, visible=False)

        def on_event(event: IndexEvent) -> None:
            if isinstance(event, WalkFinished):
                progress.update(files, description="indexing files", total=event.files)
            elif isinstance(event, FileProcessed):
                progress.update(files, completed=event.done, total=event.total)
            elif isinstance(event, ChunksEmbedded):
                progress.update(embed, visible=True, completed=event.done, total=event.total)

        report = run(lambda: ctx.facade.retrieval.index(root, progress=on_event))
    skipped = [
        {"path": s.path, "reason": str(s.reason), "detail": s.detail} for s in report.skipped
    ]
    if as_json:
        echo_json(
            {
                "root": report.root,
                "files": report.files_seen,
                "indexed": report.files_indexed,
                "unchanged": report.files_unchanged,
                "deleted": report.files_deleted,
                "chunks": report.chunks_total,
                "chunks_written": report.chunks_written,
                "skipped": skipped,
                "seconds": round(report.seconds, 3),
                "model": report.model,
            }
        )
        return
    click.echo(f"indexed {report.root}")
    click.echo(
        f"  files:   {report.files_seen} ({report.files_indexed} indexed, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted)"
    )
    click.echo(f"  chunks:  {report.chunks_total} ({report.chunks_written} written)")
    click.echo(f"  skipped: {len(skipped)}")
    for s in report.skipped:
        click.echo(f"    {s.path}: {s.reason} {s.detail}".rstrip())
    click.echo(f"  time:    {report.seconds:.2f} s")


@cli.command()
@click.argument("query")
@workspace_option
@click.option("--k", "k", type=int, help="Number of results.")
@click.option("--profile", help="Search the sources this profile sees.")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def search(
    ctx: Context, query: str, workspace: Path, k: int | None, profile: str | None, as_json: bool
) -> None:
    """Hybrid search over the workspace index and the knowledge bases."""
    hits, errors = run(
        lambda: ctx.facade.retrieval.search(query, workspace=workspace, k=k, profile=profile)
    )
    for error in errors:
        click.echo(f"warning: {error}", err=True)
    if as_json:
        echo_json([hit_json(h) for h in hits])
    else:
        _print_hits(hits)


@cli.group()
def kb() -> None:
    """Knowledge bases configured under [knowledge_bases.<id>]."""


@kb.command("list")
@workspace_option
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def kb_list(ctx: Context, workspace: Path, as_json: bool) -> None:
    """List the configured knowledge bases."""
    infos = run(lambda: ctx.facade.retrieval.kb_list(workspace))
    if as_json:
        echo_json(
            [
                {
                    "id": i.id,
                    "kind": i.kind,
                    "location": i.location,
                    "profile_aliases": list(i.profile_aliases),
                    "enabled": i.enabled,
                    "documents": i.documents,
                    "note": i.note,
                }
                for i in infos
            ]
        )
        return
    if not infos:
        click.echo("no knowledge bases configured")
    for i in infos:
        docs = "-" if i.documents is None else str(i.documents)
        aliases = ",".join(i.profile_aliases) or "all profiles"
        click.echo(f"{i.id:<16} {i.kind:<10} docs={docs:<6} {aliases:<16} {i.location}")


@kb.command("add")
@click.argument("kb_id")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@workspace_option
@pass_ctx
def kb_add(ctx: Context, kb_id: str, files: tuple[Path, ...], workspace: Path) -> None:
    """Load FILES into the local knowledge base KB_ID."""
    report = run(lambda: ctx.facade.retrieval.kb_add(workspace, kb_id, list(files)))
    click.echo(f"kb:{kb_id}: {report.passages} passages written, {report.documents} documents")
    for s in report.skipped:
        click.echo(f"  skipped {s.path}: {s.reason}", err=True)


@kb.command("search")
@click.argument("kb_id")
@click.argument("query")
@workspace_option
@click.option("--k", "k", type=int)
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def kb_search(
    ctx: Context, kb_id: str, query: str, workspace: Path, k: int | None, as_json: bool
) -> None:
    """Search one knowledge base."""
    hits = run(lambda: ctx.facade.retrieval.kb_search(workspace, kb_id, query, k=k))
    if as_json:
        echo_json([hit_json(h) for h in hits])
    else:
        _print_hits(hits)
