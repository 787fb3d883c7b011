"""Fixtures for the HTTP knowledge-base tests: each fake runs on loopback for one test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from kbfakes import FakeBedrock, FakePinecone  # noqa: E402


@pytest.fixture
def pinecone_server() -> Iterator[FakePinecone]:
    server = FakePinecone().start()
    yield server
    server.stop()


@pytest.fixture
def bedrock_server() -> Iterator[FakeBedrock]:
    server = FakeBedrock(session_token="fake-session-token-123").start()
    yield server
    server.stop()
