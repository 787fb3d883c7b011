"""Fixtures: a fresh home database and one session in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from compaction_log import Log

from kairox.services import Services


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    opened = Services.open(tmp_path / "home")
    yield opened
    opened.close()


@pytest.fixture
def log(services: Services, tmp_path: Path) -> Log:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return Log(services, services.sessions.start("s", workspace, "local"))
