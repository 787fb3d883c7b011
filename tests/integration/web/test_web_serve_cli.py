"""``kairox serve`` as a real process: the printed URL works, loopback is the default, and any
other address needs --allow-remote and prints a warning."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

KAIROX = [sys.executable, "-m", "kairox"]
URL = re.compile(r"Open: (http://\S+)")


def _serve(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*KAIROX, "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "KAIROX_HOME": str(home)},
    )


@contextmanager
def _running(home: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = _serve(home, *args)
    try:
        assert proc.stdout is not None
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if found := URL.search(line):
                yield proc, found.group(1)
                return
        raise AssertionError(f"no URL printed: {lines!r}")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_for_page(url: str) -> httpx.Response:
    deadline = time.monotonic() + 30
    while True:
        try:
            with httpx.Client(follow_redirects=True, timeout=10) as client:
                page = client.get(url)
                info = client.get(url.split("/?")[0] + "/api/info")
            assert info.status_code == 200, info.text
            return page
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                raise


def test_serve_prints_a_working_loopback_url_and_stops_on_ctrl_c(
    kairox_home: Path, workspace: Path
) -> None:
    with _running(kairox_home, "--port", "0", "--workspace", str(workspace)) as (proc, url):
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{40,}", url), url
        page = _wait_for_page(url)
        assert page.status_code == 200 and "<title>Kairox · Chat</title>" in page.text
        # Without the token, nothing.
        assert httpx.get(url.split("?")[0]).status_code == 401
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert proc.stderr is not None
        assert "Traceback" not in proc.stderr.read()


def test_a_non_loopback_host_needs_allow_remote(kairox_home: Path, workspace: Path) -> None:
    refused = subprocess.run(
        [*KAIROX, "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KAIROX_HOME": str(kairox_home)},
    )
    assert refused.returncode == 1
    assert "refusing to listen on 0.0.0.0" in refused.stderr
    assert "--allow-remote" in refused.stderr and "Traceback" not in refused.stderr

    args = ("--host", "0.0.0.0", "--allow-remote", "--port", "0", "--workspace", str(workspace))
    with _running(kairox_home, *args) as (proc, url):
        assert url.startswith("http://0.0.0.0:")
        port = url.split(":")[2].split("/")[0]
        loopback = f"http://127.0.0.1:{port}/?token={url.split('token=')[1]}"
        assert _wait_for_page(loopback).status_code == 200
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        assert proc.stderr is not None
        assert "warning: listening on 0.0.0.0" in proc.stderr.read()
