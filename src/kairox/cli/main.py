"""The root command group and the error edge: every KairoxError becomes one line and exit 1.

The group is lazy: a command's module is imported only when that command runs (or ``--help``
lists them all), so ``kairox memory list`` never loads the runtime, the model providers or the
TUI and web stacks. ``COMMANDS`` maps each top-level command to its module; a test checks it
against what the modules register.
"""

from __future__ import annotations

import asyncio
import importlib
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import click

from kairox.app import AppFacade
from kairox.core.errors import KairoxError
from kairox.core.names import check_utf8_args
from kairox.core.terminal import visible

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

# Each top-level command and the module (under kairox.cli) that registers it on ``cli``.
COMMANDS: dict[str, str] = {
    "chat": "tui_cmd",
    "compact": "compact_cmd",
    "config": "chat_cmd",
    "context": "context_cmd",
    "demo": "demo_cmd",
    "events": "events_cmd",
    "index": "retrieval_cmd",
    "kb": "retrieval_cmd",
    "mcp": "mcp_cmd",
    "memory": "memory_cmd",
    "migrate": "store_cmd",
    "models": "models_cmd",
    "profile": "chat_cmd",
    "recall": "recall_cmd",
    "search": "retrieval_cmd",
    "send": "chat_cmd",
    "serve": "web_cmd",
    "sessions": "chat_cmd",
    "tokens": "tokens_cmd",
    "trust": "chat_cmd",
}


class LazyGroup(click.Group):
    """Imports a command's module on first use of the command."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"kairox.cli.{COMMANDS[cmd_name]}")
        return self.commands.get(cmd_name)


def run(coro_fn: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(coro_fn())


@click.group(cls=LazyGroup)
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


def _checked_workspace(ctx: click.Context, _param: click.Parameter, value: Path) -> Path:
    """A workspace must exist (a typo never starts a session for a directory nobody has), and
    the configuration every command in it loads is validated now, before the command runs: a
    bad section, key or value fails every command alike, with the file, the key and the fix."""
    from kairox.app.facade import describe_model
    from kairox.core.config_load import load_config
    from kairox.core.paths import resolve_home

    home = ctx.find_object(Context)
    load_config(
        value.resolve(),
        home=resolve_home(home.home_arg if home is not None else None),
        describe=describe_model,
    )
    return value


def workspace_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--workspace",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=Path.cwd,
        show_default="current directory",
        help="Workspace directory.",
        callback=_checked_workspace,
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


def _terminate_like_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM takes the same road as Ctrl-C: the running turn ends with ``TurnFailed`` and its
    lease is released before the process exits. It calls the SIGINT handler itself instead of
    raising SIGINT, so it works where SIGINT is ignored (a background job started by a script)."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):  # asyncio's (cancels the main task) or Python's default
        handler(signal.SIGINT, frame)
    else:
        signal.default_int_handler(signal.SIGINT, frame)


def main(argv: list[str] | None = None) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate_like_interrupt)
    try:
        check_utf8_args(list(sys.argv[1:] if argv is None else argv))
    except KairoxError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)

    try:
        cli.main(args=argv, prog_name="kairox", standalone_mode=False)
    except KairoxError as exc:  # a message may quote a repo's config string: shown, not obeyed
        click.echo(f"error: {visible(str(exc), one_line=True)}", err=True)
        sys.exit(1)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
