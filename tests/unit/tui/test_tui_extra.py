"""Without Textual, ``kairox chat`` says which extra to install instead of crashing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kairox.cli.main import main
from kairox.core.errors import MissingExtra
from kairox.tui import require_textual


def test_missing_textual_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "textual", None)
    with pytest.raises(MissingExtra) as info:
        require_textual()
    assert info.value.extra == "tui"
    assert "pip install 'kairox[tui]'" in str(info.value)


def test_kairox_chat_without_textual_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], workspace: Path
) -> None:
    monkeypatch.setitem(sys.modules, "textual", None)
    with pytest.raises(SystemExit) as exited:
        main(["chat", "--workspace", str(workspace)])
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err == "error: the terminal UI needs an optional dependency: pip install 'kairox[tui]'\n"
