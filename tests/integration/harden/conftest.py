"""Fixtures for the hardening tests: logging OpenAI-compatible servers and a CLI runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harden_fakes import Kx, LoggingServer, _Server


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

    def run(
        *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        full = dict(os.environ)
        full.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "kairox", *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=full,
            cwd=cwd,
        )

    return run


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a scripted-model JSON Lines file and return its ``scripted:`` spec."""
    counter = {"n": 0}

    def make(*lines: dict[str, object]) -> str:
        counter["n"] += 1
        path = tmp_path / f"script{counter['n']}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return f"scripted:{path}"

    return make
