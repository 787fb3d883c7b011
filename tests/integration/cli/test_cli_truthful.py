"""The CLI tells the truth (issue 26): a ``--model`` gets its own window, a send that cannot reach
a model changes nothing, errors and reports in user words, memories named by scope and key,
the workspace's decisions in its events, and a config show that says where each value is from."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from helpers import kx, scripted
from kairox.services import Services

FONT = '<memory scope="user" key="editor.font">JetBrains Mono</memory>'


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def events(*args: str) -> list[dict[str, object]]:
    shown = kx("events", *args, "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)  # type: ignore[no-any-return]


def test_a_model_given_by_flag_gets_its_own_window(workspace: Path) -> None:
    # A loopback endpoint needs no key; nothing listens, so the turn fails after assembling.
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1"}
    sent = kx("send", "--workspace", str(workspace), "--model", "openai:gpt-4o-mini", "hi", env=env)
    assert sent.returncode == 1
    [trace] = [e["payload"] for e in events() if e["type"] == "ContextAssembled"]
    assert isinstance(trace, dict)
    assert trace["window"] == 128_000, trace["window"]  # not the local profile's 8,192
    assert trace["headroom"] != 1024


def test_a_send_without_an_api_key_changes_nothing(workspace: Path) -> None:
    env = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    sent = kx(
        "send", "--workspace", str(workspace), "--model", "openai:gpt-4o-mini", "hello", env=env
    )
    assert sent.returncode == 1
    lines = sent.stderr.strip().splitlines()
    assert len(lines) == 1 and "no API key" in lines[0] and "OPENAI_API_KEY" in lines[0], lines
    assert events() == []  # no session started, no TurnFailed
    listed = kx("sessions", "--workspace", str(workspace))
    assert "main" not in listed.stdout


def test_errors_and_import_reports_use_words_not_enum_names(
    workspace: Path, tmp_path: Path
) -> None:
    bogus = kx("memory", "list", "--status", "bogus")
    assert bogus.returncode != 0
    assert bogus.stderr.strip() == (
        "error: unknown memory status 'bogus'; expected one of: "
        "pending, accepted, rejected, deleted"
    ), bogus.stderr
    export = tmp_path / "notes.md"
    export.write_text("## session: cart\nWe are in the cart module.\n", encoding="utf-8")
    imported = kx("memory", "import", str(export), "--workspace", str(workspace))
    assert imported.returncode == 0, imported.stderr
    assert "skipped: session memory 'cart': session memories belong to one session" in (
        imported.stderr
    )
    assert "MemoryScope" not in imported.stderr and "<" not in imported.stderr


def test_context_lists_memories_by_scope_and_key(workspace: Path, tmp_path: Path) -> None:
    model = scripted(tmp_path, f"Noted. {FONT}", "Mono, as you said.")
    first = kx("send", "--workspace", str(workspace), "--model", model, "my font?", "--json")
    [proposal] = json.loads(first.stdout)["proposals"]
    assert kx("memory", "approve", proposal["id"]).returncode == 0
    kx("send", "--workspace", str(workspace), "--model", model, "which font?")
    shown = kx("context", "--workspace", str(workspace))
    assert shown.returncode == 0, shown.stderr
    [line] = [row for row in shown.stdout.splitlines() if " memory " in row]
    assert line.rstrip().endswith("user:editor.font") and "mem:" not in line, line


def test_workspace_events_include_its_user_memory_decisions(
    workspace: Path, tmp_path: Path, on_store: str | None
) -> None:
    model = scripted(tmp_path, f"Noted. {FONT}")
    first = kx("send", "--workspace", str(workspace), "--model", model, "my font?", "--json")
    assert first.returncode == 0, first.stderr
    [proposal] = json.loads(first.stdout)["proposals"]
    assert kx("memory", "approve", proposal["id"]).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    types = [e["type"] for e in events("--workspace", str(workspace))]
    assert "MemoryProposed" in types and "MemoryAccepted" in types, types
    assert events("--workspace", str(other)) == []


def test_config_show_names_real_sources(workspace: Path, tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[profiles.big]\nmodel = "local"\ncontext_window = 16384\n', encoding="utf-8")
    shown = kx(
        "config", "show", "--workspace", str(workspace), "--json", env={"KAIROX_CONFIG": str(user)}
    )
    assert shown.returncode == 0, shown.stderr
    rows = {r["key"]: r["source"] for r in json.loads(shown.stdout)}
    assert rows["profiles.local.context_window"] == "defaults"
    assert rows["profiles.local.model"] == "defaults"
    assert rows["profiles.big.context_window"] == str(user)
    assert rows["workspace_trust"] == "no workspace config file"
    assert ".kairox" not in rows["workspace_ignored"]


def test_migrate_progress_agrees_with_its_report(kairox_home: Path, pg_url: str) -> None:
    assert kx("sessions").returncode == 0  # a home with an empty store
    migrated = kx("--home", str(kairox_home), "migrate", "--to", pg_url)
    assert migrated.returncode == 0, migrated.stderr
    [bar] = [line for line in migrated.stderr.splitlines() if "memory_redirects" in line]
    assert bar.rstrip().endswith("0/0"), bar  # an empty table, as the report says
    [row] = [line for line in migrated.stdout.splitlines() if "memory_redirects" in line]
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert cells == ["memory_redirects", "0", "0", "0", "ok"], cells


def test_search_refreshes_a_never_indexed_workspace(workspace: Path) -> None:
    (workspace / "release.md").write_text("Releases are cut every second Tuesday.\n")
    found = kx("search", "second Tuesday release", "--workspace", str(workspace), "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits and hits[0]["path"] == "release.md", hits


def test_profile_use_waits_for_another_process_with_wait(
    workspace: Path, tmp_path: Path, kairox_home: Path
) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text(
        '[profiles.big]\nmodel = "local"\ncontext_window = 16384\n', encoding="utf-8"
    )
    model = scripted(tmp_path, "hi")
    assert kx("send", "--workspace", str(workspace), "--model", model, "hello").returncode == 0
    services = Services.open(kairox_home)
    try:
        session = services.sessions.get("main")
        services.sessions.acquire_lease(session.id, "other-process")
        refused = kx("profile", "use", "big", "--workspace", str(workspace))
        assert refused.returncode == 1 and "session busy" in refused.stderr
        args = ("profile", "use", "big", "--workspace", str(workspace), "--wait", "60")
        waiting = subprocess.Popen(
            [sys.executable, "-m", "kairox", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        services.sessions.release_lease(session.id, "other-process")
        out, err = waiting.communicate(timeout=120)
    finally:
        services.close()
    assert waiting.returncode == 0, err
    assert out.strip() == "session main now uses profile big"


def test_a_proposal_is_recorded_as_the_model_s(workspace: Path, tmp_path: Path) -> None:
    model = scripted(tmp_path, f"Noted. {FONT}")
    first = kx("send", "--workspace", str(workspace), "--model", model, "my font?", "--json")
    [proposal] = json.loads(first.stdout)["proposals"]
    shown = kx("memory", "history", proposal["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    [proposed] = json.loads(shown.stdout)
    assert proposed["action"] == "propose" and proposed["actor"] == "model", proposed


def test_memory_list_shows_a_key_once_and_a_new_memory_as_v1(
    workspace: Path, tmp_path: Path
) -> None:
    model = scripted(tmp_path, f"Noted. {FONT.replace('JetBrains Mono', 'Comic Sans')}", FONT)
    ws = ("--workspace", str(workspace))
    first = kx("send", *ws, "--model", model, "--session", "s", "font?", "--json")
    [rejected] = json.loads(first.stdout)["proposals"]
    assert kx("memory", "reject", rejected["id"]).returncode == 0
    second = kx("send", *ws, "--model", model, "--session", "s", "another?", "--json")
    [accepted] = json.loads(second.stdout)["proposals"]
    assert kx("memory", "approve", accepted["id"]).returncode == 0

    listed = kx("memory", "list", *ws, "--status", "all", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = [(m["key"], m["status"], m["version"]) for m in json.loads(listed.stdout)]
    assert rows == [("editor.font", "accepted", 1)]
    history = kx("memory", "history", accepted["id"])
    lines = history.stdout.splitlines()
    assert any("reject" in line and "Comic Sans" in line for line in lines), history.stdout
    assert lines[-1].startswith("v1 ") and "JetBrains Mono" in lines[-1], history.stdout
    shown = kx("memory", "show", accepted["id"])
    assert "(version 1)" in shown.stdout, shown.stdout
