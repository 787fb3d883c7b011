"""The root command group and the error edge: every KairoxError becomes one line and exit 1."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import click

from kairox.app import AppFacade
from kairox.core.errors import KairoxError

T = TypeVar("T")


class Context:
    """What every command needs: the home directory, opened lazily."""

    def __init__(self, home: str | None) -> None:
        self.home_arg = home
        self._facade: AppFacade | None = None

    @property
    def facade(self) -> AppFacade:
        if self._facade is None:
            self._facade = AppFacade.open(self.home_arg)
        return self._facade

    def close(self) -> None:
        if self._facade is not None:
            self._facade.close()


pass_ctx = click.make_pass_decorator(Context)


def run(coro_fn: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(coro_fn())


@click.group()
@click.option(
    "--home",
    envvar="KAIROX_HOME",
    type=click.Path(file_okay=False),
    help="Data directory (default: $KAIROX_HOME or the platform data dir).",
)
@click.version_option(package_name="kairox")
@click.pass_context
def cli(ctx: click.Context, home: str | None) -> None:
    """Kairox: memory, retrieval and context assembly for LLM agents."""
    state = Context(home)
    ctx.obj = state
    ctx.call_on_close(state.close)


def workspace_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--workspace",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path.cwd,
        show_default="current directory",
        help="Workspace directory.",
    )(fn)


session_option = click.option(
    "--session", metavar="NAME", help="Session name (default: 'main' for this workspace)."
)
profile_option = click.option("--profile", help="Model profile for this session (remembered).")
model_option = click.option(
    "--model", help="Override only the model, e.g. openai:gpt-4o-mini or scripted:PATH."
)
wait_option = click.option(
    "--wait",
    type=float,
    default=0.0,
    show_default=True,
    help="Seconds to wait if another process is running this session.",
)


def main(argv: list[str] | None = None) -> None:
    from kairox.cli import commands  # noqa: F401  (registers the subcommands)

    try:
        cli.main(args=argv, prog_name="kairox", standalone_mode=False)
    except KairoxError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
