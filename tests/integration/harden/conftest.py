"""Fixtures for the hardening tests: logging OpenAI-compatible servers and the CLI runner
(``helpers.kx``, as a fixture)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from harden_fakes import Kx, LoggingServer, _Server

import helpers


@pytest.fixture
def logging_openai() -> Iterator[Callable[[], LoggingServer]]:
    servers: list[_Server] = []

    def start() -> LoggingServer:
        log = LoggingServer()
        server = _Server(log)
        log.base_url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return log

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def kx() -> Kx:
    """Run the real ``kairox`` CLI in a subprocess with the test's environment."""
    return helpers.kx
