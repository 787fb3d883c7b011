"""The README's "Commands" block lists every command and every flag that ``--help`` shows.

The block is the first ```sh fence after the "## Commands" heading. Every command has its own
line starting with ``kairox <command path>`` (``kairox memory list ...``), and each of its
options (by its long name, ``--scope``) appears on that line.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from kairox.cli.main import cli

README = Path(__file__).resolve().parents[2] / "README.md"


def commands_block() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Commands") :]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S)
    assert block is not None, "no ```sh block under ## Commands"
    return [line for line in block.group(1).splitlines() if line.startswith("kairox")]


Leaf = tuple[tuple[str, ...], click.Command]


def leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[Leaf]:
    from kairox.cli import commands  # noqa: F401  (registers the subcommands)

    found: list[Leaf] = []
    for name, command in sorted(group.commands.items()):
        if command.hidden:
            continue
        path = (*prefix, name)
        if isinstance(command, click.Group):
            found += leaves(command, path)
        else:
            found.append((path, command))
    return found


def flags(command: click.Command) -> list[str]:
    out = []
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            longs = [o for o in param.opts if o.startswith("--")]
            out.append(longs[0] if longs else param.opts[0])
    return out


def line_for(path: tuple[str, ...], lines: list[str]) -> str | None:
    head = " ".join(["kairox", *path])
    return next((line for line in lines if line == head or line.startswith(head + " ")), None)


def test_every_command_and_flag_of_help_is_in_the_readme() -> None:
    lines = commands_block()
    missing: list[str] = []
    for path, command in leaves(cli):
        line = line_for(path, lines)
        if line is None:
            missing.append("kairox " + " ".join(path))
            continue
        for flag in flags(command):
            if flag != "--help" and not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", line):
                missing.append(f"kairox {' '.join(path)} {flag}")
    assert not missing, "README Commands block lacks: " + ", ".join(missing)
