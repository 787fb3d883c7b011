"""The ``make_app`` fixture: chat apps on fresh facades, closed at teardown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tuikit import AppMaker


@pytest.fixture
def make_app(tmp_path: Path, workspace: Path) -> Iterator[AppMaker]:
    maker = AppMaker(tmp_path, workspace)
    yield maker
    maker.close()
