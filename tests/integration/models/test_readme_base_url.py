"""The README's OpenAI-compatible server example (issue 24), run as written: the profile with
``base_url`` goes in the user config, with the URL pointed at a loopback fake server, and
``kairox send`` talks to it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Protocol

README = Path(__file__).resolve().parents[3] / "README.md"


class FakeApi(Protocol):  # the ``fake_api`` fixture of this directory's conftest
    @property
    def openai_url(self) -> str: ...

    def last_request(self) -> dict[str, object]: ...


def base_url_example() -> str:
    blocks = re.findall(r"```toml\n(.*?)```", README.read_text(), flags=re.S)
    [block] = [b for b in blocks if "base_url" in b and 'default_profile = "ollama"' in b]
    return block


def test_a_profile_points_at_an_openai_compatible_server(
    fake_api: FakeApi, tmp_path: Path, workspace: Path
) -> None:
    example = base_url_example()
    assert 'base_url = "http://127.0.0.1:11434/v1"' in example
    config = tmp_path / "user-config.toml"
    config.write_text(example.replace("http://127.0.0.1:11434/v1", fake_api.openai_url))
    env = {**os.environ, "KAIROX_CONFIG": str(config)}
    env.pop("OPENAI_API_KEY", None)  # a loopback server needs no key
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "send", "hello", "--json"],
        capture_output=True,
        text=True,
        cwd=workspace,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reply"] == "one two three"
    request = fake_api.last_request()
    assert request["path"] == "/v1/chat/completions"
    body = request["body"]
    assert isinstance(body, dict) and body["model"] == "llama3.2"
