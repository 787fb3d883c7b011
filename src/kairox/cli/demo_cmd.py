"""``kairox demo``: a scripted tour of every part in a temporary home, with no model needed."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import click

from kairox.app import AppFacade, TurnDone, TurnOutcome, bar_chart
from kairox.cli.compact_cmd import describe
from kairox.cli.main import cli, run
from kairox.core.events import ModelTokenDelta

DOCS = {
    "docs/release.md": "# Releasing\n\nReleases are cut from main every second Tuesday.\n"
    "Run `make release` after the changelog is updated.\n",
    "src/app.py": "def greet(name: str) -> str:\n    return f'Hello, {name}'\n",
}

SCRIPT = [
    {
        "text": "Got it, you prefer short answers. "
        '<memory scope="user" key="style.answers">Prefers short answers.</memory>'
        '<memory scope="session">We are touring Kairox.</memory>'
    },
    {"text": "Releases are cut from main every second Tuesday (docs/release.md)."},
    {"text": "We covered your answer style and the release schedule."},
    {
        "purpose": "summary",
        "text": "The user wants short answers. Releases: from main, every second Tuesday; "
        "the last one slipped on a changelog conflict.",
    },
]
# The first prompt carries what a real one often does (a pasted note), so that compacting the
# oldest turns frees a visible share of the history.
FIRST_PROMPT = "Keep your answers short, please."
PASTED_NOTE = (
    " For context, here is the note from our last release retro: the "
    "release slipped by two days because the changelog had a merge conflict that nobody "
    "noticed until the tag was pushed, the staging deploy then failed on a missing migration, "
    "and the rollback took an hour because the runbook still described the old deploy script. "
    "We agreed to update the changelog before cutting the branch, to run the migrations on "
    "staging first, and to keep the runbook next to the deploy script so both change together."
)
NEXT_STEPS = (
    "next: try it in a project of your own (cd there first):",
    '  kairox send "What does this project do?"   one turn with the default local model',
    "  kairox models pull qwen2.5-coder-0.5b-instruct   a local model that proposes memories",
    "  kairox chat      the terminal UI (extra: tui)",
    "  kairox serve     the web UI (extra: web)",
)


@cli.command()
@click.option("--keep", is_flag=True, help="Keep the temporary home and print its path.")
def demo(keep: bool) -> None:
    """Run a scripted tour: proposal, approval, retrieval, the context trace, compaction."""
    root = Path(tempfile.mkdtemp(prefix="kairox-demo-"))
    workspace = root / "workspace"
    for rel, text in DOCS.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    script = root / "script.jsonl"
    script.write_text("".join(json.dumps(line) + "\n" for line in SCRIPT))
    facade = AppFacade.open(root / "home", model=f"scripted:{script}")
    try:
        run(lambda: _tour(facade, workspace))
    finally:
        facade.close()
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    if keep:
        click.echo(
            f"\nthe demo home is {root / 'home'}; try: kairox --home {root / 'home'} "
            "events --session demo"
        )


async def _tour(facade: AppFacade, workspace: Path) -> None:
    step = click.style
    click.echo(step("1. index the workspace", bold=True))
    report = await facade.retrieval.index(workspace)
    click.echo(f"   {report.files_indexed} files, {report.chunks_total} chunks")
    await facade.chat.open("demo", workspace=workspace)
    try:
        click.echo(step("2. a turn whose reply proposes two memories", bold=True))
        outcome = await _turn(
            facade, FIRST_PROMPT + PASTED_NOTE, shown=FIRST_PROMPT + " [a pasted note]"
        )
        for p in outcome.proposals:
            click.echo(
                f"   proposed [{p.scope.value}] {p.key or '-'}: {p.body} -> {p.status.value}"
            )
        pending = [p for p in outcome.proposals if p.status.value == "pending"]
        click.echo(step("3. the user approves the user-scope memory", bold=True))
        for p in pending:
            approved = await facade.memory.approve(p.id)
            click.echo(f"   {approved.key}: {approved.status.value}")
        click.echo(step("4. the next turn sees the memory and the retrieved document", bold=True))
        await _turn(facade, "When are releases cut?")
        trace = await facade.context.trace("demo")
        assert trace is not None
        click.echo(step("5. the context trace of that turn", bold=True))
        click.echo(bar_chart(trace))
        for item in trace.items:
            if item.included and item.source.value in ("memory", "workspace"):
                click.echo(f"   + {item.source.value}: {item.label}")
        click.echo(step("6. compaction summarises the older turns (raw events stay)", bold=True))
        result = await facade.chat.compact("demo")
        click.echo(f"   {describe('demo', result)}")
        await _turn(facade, "What have we covered?")
        trace = await facade.context.trace("demo")
        assert trace is not None
        for item in trace.items:
            if item.included and item.source.value == "summary":
                click.echo(f"   + summary: {item.ref} ({item.tokens} tokens)")
    finally:
        await facade.aclose()
    click.echo()
    for line in NEXT_STEPS:
        click.echo(line)


async def _turn(facade: AppFacade, text: str, *, shown: str | None = None) -> TurnOutcome:
    click.echo(f"   you: {shown or text}")
    click.echo("   kairox: ", nl=False)
    outcome = None
    async for update in facade.chat.send("demo", text):
        if isinstance(update, TurnDone):
            outcome = update.outcome
        elif isinstance(update.payload, ModelTokenDelta):
            click.echo(update.payload.text, nl=False)
    click.echo()
    assert outcome is not None
    if outcome.failure:
        raise click.ClickException(outcome.failure)
    return outcome
