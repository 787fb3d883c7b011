"""``kairox recall QUERY``: search what was said, in one session or every session of a workspace.

The search is the one a turn's recall runs over the history index (caught up from the event log
first); each hit names its session, turn, seq and time.
"""

from __future__ import annotations

from pathlib import Path

import click

from kairox.cli.main import Context, cli, pass_ctx, run
from kairox.cli.render import echo_json
from kairox.core.terminal import visible


@cli.command()
@click.argument("query")
@click.option("--session", metavar="NAME", help="Search only the workspace's session NAME.")
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Search every session of this workspace (default: the current directory).",
)
@click.option("--k", "k", type=int, default=10, show_default=True, help="Number of hits.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
def recall(
    ctx: Context, query: str, session: str | None, workspace: Path | None, k: int, as_json: bool
) -> None:
    """Search the conversation history, including turns compaction summarised away."""
    result = run(
        lambda: ctx.facade.retrieval.recall(query, session=session, workspace=workspace, k=k)
    )
    scope = f"session '{session}'" if session else f"workspace {result.workspace}"
    if as_json:
        echo_json(
            {
                "query": query,
                "scope": {"session": session, "workspace": result.workspace},
                "indexed": result.indexed,
                "floor": result.floor,
                "below_floor": result.below_floor,
                "hits": [hit.to_json() for hit in result.hits],
            }
        )
        return
    if result.indexed == 0:
        click.echo(
            f"nothing is indexed for {scope} yet: the history index fills as sessions "
            "talk (kairox chat or kairox send), then recall finds what was said"
        )
        return
    under = (
        f"; {result.below_floor} under the relevance floor {result.floor:g}"
        if result.below_floor
        else ""
    )
    if not result.hits:
        click.echo(f"no matches in {scope} ({result.indexed} messages indexed{under})")
        return
    for hit in result.hits:
        turn = f" turn {hit.turn}" if hit.turn is not None else ""
        click.echo(
            f"{hit.score:6.3f}  {hit.session}{turn}  seq:{hit.seq}  {hit.date}  {hit.speaker}"
        )
        click.echo(f"        {visible(hit.snippet(), one_line=True)}")
    if under:
        click.echo(f"({under[2:]})")
