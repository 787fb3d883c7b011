"""The relevance floor through the real binary: no evidence, no hits; scores compare across
sources; the context takes only hits above the floor, and only those make proposals untrusted."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import kx

HANDBOOK = """# Leave policy

Parental leave is sixteen weeks at full pay for every parent.

# Equipment

Laptops are replaced every three years.

# Travel

Book trains for journeys under five hours.
"""


def project(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".gitignore").write_text("build/\n*.pyc\n.venv/\n")
    (workspace / "app.py").write_text("def main():\n    print('hello from the app')\n")
    (workspace / "NOTES.md").write_text("Deploys go through the staging pipeline first.\n")
    (workspace / "todo.txt").write_text("Fix the flaky login test before the release.\n")
    config = workspace / ".kairox" / "config.toml"
    config.parent.mkdir()
    config.write_text('[knowledge_bases.handbook]\nkind = "sqlite_fts"\npath = "handbook.db"\n')
    (tmp_path / "handbook.md").write_text(HANDBOOK)
    added = kx(
        "kb", "add", "handbook", str(tmp_path / "handbook.md"), "--workspace", str(workspace)
    )
    assert added.returncode == 0, added.stderr
    assert kx("index", str(workspace)).returncode == 0


def untrusted(memory_id: str) -> list[dict[str, str]]:
    shown = json.loads(kx("memory", "show", memory_id, "--json").stdout)
    return shown["untrusted_inputs"]  # type: ignore[no-any-return]


def search(workspace: Path, query: str) -> list[dict[str, object]]:
    result = kx("search", query, "--workspace", str(workspace), "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_no_evidence_no_hits_and_the_right_passage_wins(workspace: Path, tmp_path: Path) -> None:
    project(workspace, tmp_path)

    assert search(workspace, "xyzzy") == []
    assert search(workspace, "xyzzy plugh") == []
    plain = kx("search", "xyzzy", "--workspace", str(workspace))
    assert plain.returncode == 0 and "1.000" not in plain.stdout

    hits = search(workspace, "how many weeks of parental leave")
    assert hits[0]["source"] == "kb:handbook" and "sixteen weeks" in str(hits[0]["snippet"])
    assert float(hits[0]["score"]) >= 0.2  # type: ignore[arg-type]
    workspace_scores = [float(h["score"]) for h in hits if h["source"] != "kb:handbook"]  # type: ignore[arg-type]
    assert all(score < float(hits[0]["score"]) for score in workspace_scores)  # type: ignore[arg-type]


def test_only_hits_above_the_floor_reach_the_prompt_and_mark_proposals(
    workspace: Path, tmp_path: Path
) -> None:
    project(workspace, tmp_path)

    def send(message: str, session: str) -> dict[str, object]:
        marker = f'<memory scope="workspace" key="{session}.note">{message}</memory>'
        script = tmp_path / f"{session}.jsonl"
        script.write_text(json.dumps({"text": f"Ok. {marker}"}) + "\n")
        result = kx(
            "send", "--workspace", str(workspace), "--model", f"scripted:{script}",
            "--session", session, "--json", message,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)  # type: ignore[no-any-return]

    def trace(session: str) -> dict[str, object]:
        shown = kx("events", "--workspace", str(workspace), "--session", session, "--json")
        events = json.loads(shown.stdout)
        [assembled] = [e for e in events if e["type"] == "ContextAssembled"]
        return assembled["payload"]  # type: ignore[no-any-return]

    unrelated = send("xyzzy plugh", "noise")
    payload = trace("noise")
    assert payload["relevance_floor"] == 0.2
    assert not [i for i in payload["items"] if i["source"] in ("workspace", "knowledge_base")]  # type: ignore[attr-defined]
    [quiet] = unrelated["proposals"]  # type: ignore[misc]
    assert untrusted(quiet["id"]) == []

    related = send("what do the notes say about the staging pipeline for deploys?", "deploys")
    included = [
        i
        for i in trace("deploys")["items"]  # type: ignore[attr-defined]
        if i["source"] == "workspace" and i["included"]
    ]
    assert [i["ref"] for i in included] == [f"chunk:workspace:{workspace.resolve()}#NOTES.md:1-1"]
    [flagged] = related["proposals"]  # type: ignore[misc]
    assert [u["kind"] for u in untrusted(flagged["id"])] == ["workspace_chunk"]
