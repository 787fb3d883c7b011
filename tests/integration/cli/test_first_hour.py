"""A newcomer's first hour through the real CLI (issue 37): a refused memory says why wherever it
is shown, `models pull` errors name the host and the hash it checks by, `sessions` has a header
and names the model that answered, `config show` attributes what it shows, and the demo ends
with a compaction worth its name and a next step."""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from helpers import kx
from helpers import scripted as script
from kairox.models.catalog import KNOWN

COPIED = '<memory scope="user" key="habit.night_owl">The user usually works late at night.</memory>'
REASON = "the key 'habit.night_owl' is copied from the system prompt's example"
CODER = "qwen2.5-coder-0.5b-instruct"
DATA = b"not the real model" * 1000


def test_a_refused_memory_says_why_in_send_show_list_and_history(
    workspace: Path, tmp_path: Path, on_store: str | None
) -> None:
    again = COPIED.replace("usually works late at night", "works at night")
    model = script(tmp_path, f"Noted. {COPIED}", f"Noted. {again}")
    sent = kx("send", "--workspace", str(workspace), "--model", model, "I work late")
    assert sent.returncode == 0, sent.stderr
    assert "memory rejected: [user] habit.night_owl" in sent.stderr
    assert f"rejected by policy: {REASON}" in sent.stderr
    as_json = kx("send", "--workspace", str(workspace), "--model", model, "--json", "again")
    [refused] = json.loads(as_json.stdout)["proposals"]
    assert refused["status"] == "rejected" and refused["decision_reason"] == REASON
    listed = kx("memory", "list", "--workspace", str(workspace), "--status", "all", "--json")
    record = next(r for r in json.loads(listed.stdout) if "late" in r["body"])
    table = kx("memory", "list", "--workspace", str(workspace), "--status", "all").stdout
    assert table.count(f"rejected by policy: {REASON}") == 2
    shown = kx("memory", "show", record["id"])
    assert f"reason:    rejected by policy: {REASON}" in shown.stdout.splitlines()
    history = kx("memory", "history", record["id"]).stdout.splitlines()
    reject = next(i for i, line in enumerate(history) if " reject " in line)
    assert history[reject + 1].strip() == f"reason: {REASON}"
    versions = json.loads(kx("memory", "history", "--json", record["id"]).stdout)
    assert [v["reason"] for v in versions] == [None, REASON]


def test_sessions_have_a_header_and_name_the_model_that_answered(
    workspace: Path, tmp_path: Path, on_store: str | None
) -> None:
    empty = kx("sessions")
    assert empty.returncode == 0 and empty.stdout.startswith("no sessions (")
    model = script(tmp_path, "hello")
    assert kx("send", "--workspace", str(workspace), "--model", model, "hi").returncode == 0
    lines = kx("sessions").stdout.splitlines()
    assert lines[0].split() == ["NAME", "PROFILE", "ANSWERED", "BY", "WORKSPACE"]
    [row] = lines[1:]
    name, profile, answered = row.split()[:3]
    assert (name, profile) == ("main", "local")  # the profile, then who answered
    assert answered.startswith("scripted:/") and answered.endswith("/script1.jsonl")
    [info] = json.loads(kx("sessions", "--json").stdout)
    assert info["profile"] == "local" and info["answered_by"] == model


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_offline_pull_names_the_host_and_offers_no_resume(kairox_home: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/model.gguf"
    failed = kx("models", "pull", "tiny", "--url", url, "--sha256", "ab" * 32)
    assert failed.returncode == 1
    [line] = failed.stderr.strip().splitlines()
    assert "could not download from 127.0.0.1" in line and "ConnectError" in line
    assert "nothing was downloaded" in line and "resume" not in line
    assert "0 bytes" not in line


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(DATA)))
        self.end_headers()
        self.wfile.write(DATA)


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_url_for_a_known_model_is_checked_by_its_official_sha256(
    kairox_home: Path, server: str
) -> None:
    official = json.loads(kx("models", "list", "--json").stdout)
    known = next(m["sha256"] for m in official if m["name"] == CODER)
    assert known == KNOWN[CODER].sha256
    mirrored = kx("models", "pull", CODER, "--url", f"{server}/mirror.gguf")
    assert mirrored.returncode == 1
    [line] = mirrored.stderr.strip().splitlines()
    assert "no official SHA-256" not in line
    assert f"expected {known}" in line and hashlib.sha256(DATA).hexdigest() in line
    assert list((kairox_home / "models").iterdir()) == []  # nothing kept


def test_config_show_attributes_defaults_and_the_local_model_file(
    workspace: Path, tmp_path: Path
) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[profiles.api]\nmodel = "openai:gpt-4o-mini"\n', encoding="utf-8")
    shown = kx(
        "config",
        "show",
        "--workspace",
        str(workspace),
        "--json",
        env={**_env(), "KAIROX_CONFIG": str(user)},
    )
    assert shown.returncode == 0, shown.stderr
    rows = {r["key"]: r["source"] for r in json.loads(shown.stdout)}
    assert rows["profiles.api.model"] == str(user)
    assert rows["profiles.api.headroom"] == "defaults"  # the file never set it
    assert rows["profiles.local.context_window"] == "defaults"
    assert "bundled demo model" in rows["profiles.local.model_file"]
    assert "models list" in rows["profiles.local.model_file"]


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_the_demo_frees_most_of_what_it_compacts_and_ends_with_a_next_step() -> None:
    demo = kx("demo")
    assert demo.returncode == 0, demo.stderr
    found = re.search(r"summarised: (\d+) -> (\d+) tokens", demo.stdout)
    assert found is not None, demo.stdout
    before, after = int(found.group(1)), int(found.group(2))
    assert after * 2 <= before, (before, after)
    tail = demo.stdout.strip().splitlines()[-5:]
    assert tail[0].startswith("next:")
    assert any(line.strip().startswith("kairox send") for line in tail)
    assert any("kairox models pull" in line for line in tail)
