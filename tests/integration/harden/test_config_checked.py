"""Every command validates the configuration it loads (issue 33, Low): a workspace that does not
exist is refused, a bad section or value fails ``memory list`` as it fails ``send``, a missing
``$KAIROX_CONFIG`` file is an error, and an error quoting a repo's string cannot drive the
terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from harden_fakes import Kx


def test_a_workspace_that_does_not_exist_is_refused(
    tmp_path: Path, kx: Kx, kairox_home: Path
) -> None:
    typo = tmp_path / "typo" / "path"
    for args in (("send", "hi"), ("memory", "list"), ("context",)):
        result = kx(*args, "--workspace", str(typo))
        assert result.returncode != 0, args
        assert "does not exist" in result.stderr, args
    assert not typo.exists()
    assert "typo" not in kx("sessions", "--json").stdout  # no session was started for it


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[memorry]\nextract = "off"\n', "key 'memorry'"),
        ('[memory]\nextract = "sometimes"\n', "key 'memory.extract'"),
    ],
)
def test_a_bad_config_fails_every_command_alike(
    text: str, expected: str, tmp_path: Path, workspace: Path, kx: Kx
) -> None:
    user = tmp_path / "user.toml"
    user.write_text(text)
    env = {"KAIROX_CONFIG": str(user)}
    for args in (("memory", "list"), ("events",), ("send", "hi"), ("context",)):
        result = kx(*args, "--workspace", str(workspace), env=env)
        assert result.returncode == 1, (args, result.stdout)
        [line] = result.stderr.strip().splitlines()
        assert line.startswith("error: config error: ") and expected in line, args


def test_a_missing_kairox_config_file_is_an_error(tmp_path: Path, workspace: Path, kx: Kx) -> None:
    env = {"KAIROX_CONFIG": str(tmp_path / "nope.toml")}
    for args in (("memory", "list", "--workspace", str(workspace)), ("tokens", "list")):
        result = kx(*args, env=env)
        assert result.returncode == 1, args
        [line] = result.stderr.strip().splitlines()
        assert "KAIROX_CONFIG" in line and "nope.toml" in line


def test_a_repo_string_on_the_error_line_is_escaped(workspace: Path, kx: Kx) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text(
        'default_profile = "x\\u001b]0;pwned\\u0007\\u001b[2J"\n'
    )
    result = kx("send", "--workspace", str(workspace), "hi")
    assert result.returncode == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
