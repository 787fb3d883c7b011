"""The lazy root group's map names every command, and the module that registers it."""

from __future__ import annotations

from click.testing import CliRunner

from kairox.cli import commands
from kairox.cli.main import COMMANDS, cli


def test_the_map_matches_what_the_modules_register() -> None:
    assert commands.__all__  # every command module is imported
    assert set(cli.commands) == set(COMMANDS)
    for name, command in cli.commands.items():
        assert command.callback is not None
        assert command.callback.__module__ == f"kairox.cli.{COMMANDS[name]}", name


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in result.output or f"  {name}\n" in result.output
