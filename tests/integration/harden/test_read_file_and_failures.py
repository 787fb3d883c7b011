"""``read_file`` reads what the index may read, never secrets, at most its cap; any exception in a
tool or a turn ends the turn with ``TurnFailed`` and one line."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from harden_fakes import Kx

from kairox.app import AppFacade, TurnDone
from kairox.core.events import TurnFailed
from kairox.runtime.tools import MAX_READ_BYTES, BuiltinTools


@pytest.fixture
def tools(workspace: Path) -> BuiltinTools:
    return BuiltinTools(workspace, None)


def test_read_file_honours_gitignore_and_kairoxignore(workspace: Path, tools: BuiltinTools) -> None:
    (workspace / ".gitignore").write_text("build/\n*.log\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / ".kairoxignore").write_text("private.md\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.txt").write_text("built")
    (workspace / "run.log").write_text("log")
    (workspace / "docs" / "private.md").write_text("private")
    (workspace / "docs" / "public.md").write_text("public")
    for path in ("build/out.txt", "run.log", "docs/private.md", "docs/../run.log"):
        result = tools.read_file(path)
        assert result.is_error and "ignored" in result.text, path
    assert tools.read_file("docs/public.md").text == "public"


@pytest.mark.parametrize(
    "path",
    [".env", ".env.production", "config/.env.local", ".git/config", "keys/id_rsa",
     "deploy/server.pem", ".aws/credentials", "credentials.json", ".ssh/id_ed25519.pub"],
)  # fmt: skip
def test_read_file_refuses_the_secret_denylist(
    workspace: Path, tools: BuiltinTools, path: str
) -> None:
    target = workspace / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("AWS_SECRET_ACCESS_KEY=hunter2\n")
    result = tools.read_file(path)
    assert result.is_error and "secrets" in result.text and "hunter2" not in result.text


def test_read_file_denylist_is_configurable_by_the_user_only(
    workspace: Path,
    tmp_path: Path,
    kx: Kx,
    script: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workspace / ".env").write_text("TOKEN=abc\n")
    (workspace / "notes.md").write_text("plain notes\n")
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text('[tools]\nread_file_deny = ["notes.md"]\n')

    sessions = iter(range(100))

    def read(path: str, env: dict[str, str]) -> dict[str, object]:
        name = f"s{next(sessions)}"
        model = script(
            {"tool_call": {"name": "read_file", "arguments": {"path": path}}}, {"text": "ok"}
        )
        out = kx("send", "--workspace", str(workspace), "--session", name, "--model", model,
                 "read", env=env)  # fmt: skip
        assert out.returncode == 0, out.stderr
        events = json.loads(
            kx("events", "--workspace", str(workspace), "--session", name, "--json", env=env).stdout
        )
        [tool] = [e for e in events if e["type"] == "ToolInvocationCompleted"]
        return dict(tool["payload"])

    # The untrusted workspace cannot change the denylist: .env stays hidden, notes.md readable.
    assert read(".env", {})["is_error"]
    assert read("notes.md", {})["result"] == "plain notes\n"
    user = tmp_path / "user.toml"
    user.write_text('[tools]\nread_file_deny = ["*.md"]\n')
    env = {"KAIROX_CONFIG": str(user)}
    assert read(".env", env)["result"] == "TOKEN=abc\n"


def test_read_file_reads_at_most_its_cap_from_disk(workspace: Path, tools: BuiltinTools) -> None:
    big = workspace / "huge.txt"
    with big.open("wb") as fh:
        fh.write(b"x" * (2 * MAX_READ_BYTES))  # text up to past the cap (NUL would be binary)
        fh.truncate(300 * 1024 * 1024)  # sparse: 300 MB on paper, nothing more on disk
    tracemalloc.start()
    try:
        result = tools.read_file("huge.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not result.is_error
    assert result.text.endswith(
        f"[truncated: the first {MAX_READ_BYTES} of {300 * 1024 * 1024} bytes]"
    )
    assert peak < 8 * MAX_READ_BYTES


def test_a_multibyte_character_at_the_cut_is_dropped(workspace: Path, tools: BuiltinTools) -> None:
    text = "a" * (MAX_READ_BYTES - 1) + "€" + "tail"
    (workspace / "euro.txt").write_text(text, encoding="utf-8")
    result = tools.read_file("euro.txt")
    assert not result.is_error
    assert result.text.startswith("a" * (MAX_READ_BYTES - 1) + "\n[truncated:")


@pytest.mark.parametrize(
    "path", ["a\x00b", "x" * 5000, "/".join(["d"] * 3000)], ids=["nul", "long", "deep"]
)
def test_hostile_paths_end_the_turn_cleanly(
    workspace: Path, kx: Kx, script: Callable[..., str], path: str
) -> None:
    model = script(
        {"tool_call": {"name": "read_file", "arguments": {"path": path}}}, {"text": "done"}
    )
    out = kx("send", "--workspace", str(workspace), "--model", model, "--json", "read it")
    assert "Traceback" not in out.stderr
    events = json.loads(kx("events", "--json").stdout)
    types = [e["type"] for e in events]
    after_prompt = types[types.index("UserMessageAdded") :]
    assert {"AssistantMessageCompleted", "TurnFailed"} & set(after_prompt)
    [tool] = [e for e in events if e["type"] == "ToolInvocationCompleted"]
    assert tool["payload"]["is_error"]


async def test_an_exception_inside_a_tool_ends_the_turn_with_turn_failed(
    workspace: Path, kairox_home: Path, script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(self: BuiltinTools, path: str) -> object:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(BuiltinTools, "read_file", explode)
    model = script({"tool_call": {"name": "read_file", "arguments": {"path": "a"}}})
    facade = AppFacade.open(kairox_home, model=model)
    try:
        await facade.chat.open("boom", workspace=workspace)
        updates = [u async for u in facade.chat.send("boom", "read a")]
    finally:
        await facade.aclose()
        facade.close()
    done = updates[-1]
    assert isinstance(done, TurnDone)
    assert done.outcome.failure == (
        "internal error in the turn (RuntimeError: disk on fire second line)"
    )
    failed = [u.payload for u in updates[:-1] if isinstance(u.payload, TurnFailed)]  # type: ignore[union-attr]
    assert [f.reason for f in failed] == [done.outcome.failure]


def test_read_file_refuses_a_file_with_nul_bytes(workspace: Path, tools: BuiltinTools) -> None:
    (workspace / "blob.txt").write_bytes(b"looks like text\x00but is not\n")
    result = tools.read_file("blob.txt")
    assert result.is_error and "NUL" in result.text and "looks like" not in result.text
