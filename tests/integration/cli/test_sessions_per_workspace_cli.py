"""Issue 13: session names are per workspace. Every workspace has its own ``main``; a name is
resolved in the command's workspace; a name that exists only elsewhere is a one-line error that
says where it lives."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import kx, scripted


def send(workspace: Path, message: str, *extra: str) -> dict[str, object]:
    model = scripted(workspace.parent, f"reply in {workspace.name}")
    done = kx("send", "--workspace", str(workspace), "--model", model, "--json", *extra, message)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def sent_texts(workspace: Path, *session: str) -> list[str]:
    shown = kx("context", "--show", "--json", *session, cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    return [m["content"] for m in json.loads(shown.stdout) if m["role"] == "user"]


def test_each_workspace_has_its_own_main(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert send(a, "hello from a")["session"] == "main"
    assert send(b, "hello from b")["session"] == "main"  # not main-<hash>
    listed = json.loads(kx("sessions", "--json").stdout)
    assert sorted((s["name"], s["workspace_path"]) for s in listed) == [
        ("main", str(a.resolve())),
        ("main", str(b.resolve())),
    ]
    # Resolved in the current workspace: B's main, never A's.
    assert sent_texts(b, "--session", "main") == ["hello from b"]
    assert sent_texts(b) == ["hello from b"]
    assert sent_texts(a, "--session", "main") == ["hello from a"]
    archived = kx("sessions", "archive", "main", "--workspace", str(b))
    assert archived.returncode == 0, archived.stderr
    listed = json.loads(kx("sessions", "--json").stdout)
    assert [s["workspace_path"] for s in listed] == [str(a.resolve())]


def test_a_name_only_in_another_workspace_is_not_found_here(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    send(a, "hello", "--session", "ops")
    for args in (
        ("context", "--session", "ops"),
        ("compact", "--session", "ops"),
        ("profile", "use", "local", "--session", "ops"),
        ("events", "--session", "ops"),
        ("sessions", "archive", "ops"),
    ):
        refused = kx(*args, cwd=b)
        nobody = kx(*args[:-1], "nope", cwd=b) if args[-1] == "ops" else None
        assert refused.returncode == 1, args
        assert str(a) not in refused.stderr, args
        if nobody is not None:  # the same error as a session nobody has
            assert refused.stderr == nobody.stderr.replace("nope", "ops"), args
    assert kx("context", "--session", "ops", cwd=a).returncode == 0


def test_events_with_workspace_lists_only_that_workspace(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    send(a, "hello from a")
    send(b, "hello from b")

    def events(*args: str, cwd: Path | None = None) -> list[dict[str, object]]:
        done = kx("events", "--json", *args, cwd=cwd)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    everything = events()  # no --workspace: the whole home's log, as before
    assert len({e["workspace_id"] for e in everything}) == 2
    only_b = events("--workspace", str(b), cwd=a)
    assert only_b and {e["workspace_id"] for e in only_b} == {
        e["workspace_id"] for e in everything if e["type"] == "UserMessageAdded"
        and e["payload"]["text"] == "hello from b"  # type: ignore[index]
    }  # fmt: skip
    said = [e["payload"]["text"] for e in only_b if e["type"] == "UserMessageAdded"]  # type: ignore[index]
    assert said == ["hello from b"]
    assert len(only_b) + len(events("--workspace", str(a))) == len(everything)
