"""Fixtures of the adapter tests: the store under test (``backend``) and a ``KairoxStore``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from kairox.integrations.langgraph import KairoxStore


@pytest.fixture
def backend(on_store: str | None) -> str | None:
    """SQLite or Postgres (``on_store``), under the name the adapter tests use."""
    return on_store


@pytest.fixture
def store(backend: str | None, workspace: Path) -> Iterator[KairoxStore]:
    """A LangGraph ``KairoxStore`` on ``workspace``, closed after the test."""
    from kairox.integrations.langgraph import KairoxStore

    kx = KairoxStore(workspace=workspace)
    yield kx
    kx.close()
