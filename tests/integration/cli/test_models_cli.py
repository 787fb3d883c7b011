"""``kairox models list|pull|remove`` against a loopback HTTP server: a verified pull, an
interrupted one that resumes, a corrupted one that leaves nothing, and the local profile using
a pulled model."""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from helpers import KAIROX, kx

DATA = bytes(range(256)) * 8192  # 2 MiB
SHA = hashlib.sha256(DATA).hexdigest()
CODER = "qwen2.5-coder-0.5b-instruct"


class _Handler(BaseHTTPRequestHandler):
    requests: list[tuple[str, str | None]] = []  # noqa: RUF012 (one server per test)

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        wanted = self.headers.get("Range")
        type(self).requests.append((self.path, wanted))
        body = DATA if self.path != "/bad.gguf" else DATA[:-1] + b"x"
        start = int(wanted.split("=")[1].split("-")[0]) if wanted else 0
        if start:
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        rest = body[start:]
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        if self.path == "/cut.gguf" and not start:
            self.wfile.write(rest[: len(rest) // 2])  # the connection drops half-way
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(rest)


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_pull_verifies_lists_and_removes(kairox_home: Path, server: str) -> None:
    pulled = kx("models", "pull", "tiny", "--url", f"{server}/model.gguf", "--sha256", SHA)
    assert pulled.returncode == 0, pulled.stderr
    target = kairox_home / "models" / "tiny.gguf"
    assert target.read_bytes() == DATA and "SHA-256 verified" in pulled.stdout
    meta = json.loads((kairox_home / "models" / "tiny.json").read_text())
    assert meta["sha256"] == SHA and meta["url"].endswith("/model.gguf")
    listed = json.loads(kx("models", "list", "--json").stdout)
    names = {m["name"]: m for m in listed}
    assert names["tiny"]["path"] == str(target)
    assert {CODER, "qwen2.5-0.5b-instruct", "smollm2-135m-instruct"} <= set(names)
    coder = names[CODER]
    assert coder["sha256"].startswith("1d961463") and coder["sha256"].endswith("4ff32")
    assert coder["licence"] == "Apache-2.0" and coder["size"] == 491_400_064
    qwen = names["qwen2.5-0.5b-instruct"]
    assert qwen["sha256"].startswith("74a4da8c") and qwen["sha256"].endswith("7a9db")
    assert qwen["licence"] == "Apache-2.0" and qwen["size"] == 491_400_032
    again = kx("models", "pull", "tiny", "--url", f"{server}/model.gguf", "--sha256", SHA)
    assert "already pulled" in again.stdout
    removed = kx("models", "remove", "tiny")
    assert removed.returncode == 0 and not target.exists()
    missing = kx("models", "remove", "tiny")
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1


def test_an_interrupted_pull_resumes_where_it_stopped(kairox_home: Path, server: str) -> None:
    first = kx("models", "pull", "cut", "--url", f"{server}/cut.gguf", "--sha256", SHA)
    assert first.returncode == 1
    [line] = first.stderr.strip().splitlines()
    assert "interrupted" in line and "again to resume" in line
    part = kairox_home / "models" / "cut.gguf.part"
    assert 0 < part.stat().st_size < len(DATA)
    assert not (kairox_home / "models" / "cut.gguf").exists()
    second = kx("models", "pull", "cut", "--url", f"{server}/cut.gguf", "--sha256", SHA)
    assert second.returncode == 0, second.stderr
    assert "resumed at" in second.stdout
    assert (kairox_home / "models" / "cut.gguf").read_bytes() == DATA and not part.exists()
    assert _Handler.requests[-1] == ("/cut.gguf", f"bytes={len(DATA) // 2}-")


def test_a_wrong_hash_leaves_nothing_behind(kairox_home: Path, server: str) -> None:
    bad = kx("models", "pull", "bad", "--url", f"{server}/bad.gguf", "--sha256", SHA)
    assert bad.returncode == 1
    [line] = bad.stderr.strip().splitlines()
    assert "SHA-256" in line and "nothing was kept" in line
    assert list((kairox_home / "models").iterdir()) == []
    nohash = kx("models", "pull", "tiny", "--url", f"{server}/model.gguf")
    assert nohash.returncode == 1 and "--sha256" in nohash.stderr
    assert list((kairox_home / "models").iterdir()) == []
    assert _Handler.requests == [("/bad.gguf", None)]  # nothing fetched without a hash
    unknown = kx("models", "pull", "gpt-5")
    assert unknown.returncode == 1 and "--url URL --sha256 HEX" in unknown.stderr


def test_the_local_profile_uses_a_pulled_model_that_follows_the_protocol(
    kairox_home: Path, server: str, workspace: Path
) -> None:
    def model_file() -> str:
        rows = json.loads(kx("config", "show", "--workspace", str(workspace), "--json").stdout)
        return next(r["value"] for r in rows if r["key"] == "profiles.local.model_file")

    assert model_file().endswith("SmolLM2-135M-Instruct.Q4_1.gguf")  # the fallback
    pulled = kx("models", "pull", CODER, "--url", f"{server}/model.gguf", "--sha256", SHA)
    assert pulled.returncode == 0, pulled.stderr
    assert model_file() == str(kairox_home / "models" / f"{CODER}.gguf")
    listed = json.loads(kx("models", "list", "--json").stdout)
    assert [m["name"] for m in listed if m["used_by_local"]] == [CODER]


def test_a_write_failure_is_one_line_and_leaves_no_part(kairox_home: Path, server: str) -> None:
    """``ulimit -f`` (as a full disk would): the write fails part-way (issue 33, Low)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(DATA) // 4, len(DATA) // 4))

    # The home is made first: its database (and its write-ahead log, while it migrates)
    # outgrows the limit, and only the model's download is under test here.
    assert kx("models", "list").returncode == 0
    failed = subprocess.run(
        [*KAIROX, "models", "pull", "big", "--url", f"{server}/model.gguf", "--sha256", SHA],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit,
    )
    assert failed.returncode == 1
    [line] = failed.stderr.strip().splitlines()
    assert "cannot write" in line and "nothing was kept" in line
    assert sorted(p.name for p in (kairox_home / "models").iterdir()) == []
