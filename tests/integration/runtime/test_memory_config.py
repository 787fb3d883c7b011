"""``[memory]`` settings take effect, and an unknown key anywhere names itself and its file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import kx, write_config
from kairox.core.events import (
    MemoryExtractionFailed,
    MemoryProposed,
    ModelCallStarted,
    StoredEvent,
)
from kairox.core.types import MemoryOrigin
from kairox.services import Services

Script = Callable[..., str]
SESSION_MARKER = '<memory scope="session">We are on the release branch.</memory>'


def send(workspace: Path, model: str, message: str) -> dict[str, object]:
    result = kx("send", "--workspace", str(workspace), "--model", model, "--json", message)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_config_show_prints_exactly_the_memory_keys_tested_here(workspace: Path) -> None:
    rows = json.loads(kx("config", "show", "--workspace", str(workspace), "--json").stdout)
    keys = {r["key"] for r in rows if r["key"].startswith("memory.")}
    assert keys == {
        "memory.auto_accept_session",
        "memory.max_proposals_per_turn",
        "memory.session_after_untrusted",
        "memory.extract",
    }


def test_session_after_untrusted_has_two_values_and_refuses_others(workspace: Path) -> None:
    rows = json.loads(kx("config", "show", "--workspace", str(workspace), "--json").stdout)
    [row] = [r for r in rows if r["key"] == "memory.session_after_untrusted"]
    assert row["value"] == "accept"  # the default: a tainted session memory is accepted, marked
    path = write_config(workspace, '[memory]\nsession_after_untrusted = "sometimes"\n')
    shown = kx("config", "show", "--workspace", str(workspace))
    assert shown.returncode == 1
    [line] = shown.stderr.splitlines()
    assert str(path) in line and "memory.session_after_untrusted" in line
    assert "'accept' or 'ask'" in line


def test_auto_accept_session_false_leaves_session_memories_pending(
    workspace: Path, script: Script
) -> None:
    write_config(workspace, "[memory]\nauto_accept_session = false\n", trusted=True)
    out = send(workspace, script({"text": f"Ok. {SESSION_MARKER}"}), "remember the branch")
    [proposal] = out["proposals"]  # type: ignore[misc]
    assert proposal["scope"] == "session" and proposal["status"] == "pending"


def test_auto_accept_session_true_accepts_them(workspace: Path, script: Script) -> None:
    write_config(workspace, "[memory]\nauto_accept_session = true\n", trusted=True)
    out = send(workspace, script({"text": f"Ok. {SESSION_MARKER}"}), "remember the branch")
    [proposal] = out["proposals"]  # type: ignore[misc]
    assert proposal["status"] == "accepted"


def test_max_proposals_per_turn_caps_the_turn(workspace: Path, script: Script) -> None:
    write_config(workspace, "[memory]\nmax_proposals_per_turn = 1\n", trusted=True)
    markers = "".join(
        f'<memory scope="workspace" key="k{n}">fact number {n}</memory>' for n in range(3)
    )
    out = send(workspace, script({"text": f"Noted. {markers}"}), "three facts")
    statuses = [p["status"] for p in out["proposals"]]  # type: ignore[union-attr, index]
    assert statuses == ["pending", "rejected", "rejected"]


def _events(home: Path) -> list[StoredEvent]:
    services = Services.open(home)
    try:
        return services.events.read()
    finally:
        services.close()


USER_MARKER = '<memory scope="user" key="user.name">The user is called Dana</memory>'


def test_extract_after_turn_proposes_with_origin_extraction(
    workspace: Path, script: Script, kairox_home: Path
) -> None:
    write_config(workspace, '[memory]\nextract = "after_turn"\n', trusted=True)
    model = script(
        {"text": "Nice to meet you, Dana."}, {"purpose": "extraction", "text": USER_MARKER}
    )
    out = send(workspace, model, "Hi! My name is Dana.")
    assert out["reply"] == "Nice to meet you, Dana."
    [proposal] = out["proposals"]  # type: ignore[misc]
    assert proposal["scope"] == "user" and proposal["status"] == "pending"
    events = _events(kairox_home)
    types = [e.type for e in events]
    completed = types.index("AssistantMessageCompleted")
    calls = [e.payload for e in events if isinstance(e.payload, ModelCallStarted)]
    assert [c.purpose for c in calls] == ["reply", "extraction"]
    assert types.index("MemoryProposed") > completed  # after the turn, in the actor
    [proposed] = [e.payload for e in events if isinstance(e.payload, MemoryProposed)]
    assert proposed.origin is MemoryOrigin.EXTRACTION and proposed.turn == 1


def test_extract_after_turn_failure_is_an_event_and_the_turn_stands(
    workspace: Path, script: Script, kairox_home: Path
) -> None:
    write_config(workspace, '[memory]\nextract = "after_turn"\n', trusted=True)
    model = script({"text": "Hello."}, {"purpose": "extraction", "error": "extractor down"})
    out = send(workspace, model, "Hi")
    assert out["reply"] == "Hello." and out.get("failure") is None and out["proposals"] == []
    [failed] = [
        e.payload for e in _events(kairox_home) if isinstance(e.payload, MemoryExtractionFailed)
    ]
    assert failed.turn == 1 and "extractor down" in failed.reason


def test_extract_inline_by_default_makes_no_extra_call(
    workspace: Path, script: Script, kairox_home: Path
) -> None:
    out = send(workspace, script({"text": f"Ok. {SESSION_MARKER}"}), "remember the branch")
    assert len(out["proposals"]) == 1  # type: ignore[arg-type]
    purposes = [
        e.payload.purpose for e in _events(kairox_home) if isinstance(e.payload, ModelCallStarted)
    ]
    assert purposes == ["reply"]


def test_extract_per_profile_overrides_memory_extract(
    workspace: Path, script: Script, kairox_home: Path
) -> None:
    write_config(
        workspace,
        '[memory]\nextract = "off"\n[profiles.local]\nmodel = "local"\nextract = "after_turn"\n',
        trusted=True,
    )
    model = script({"text": "Hi."}, {"purpose": "extraction", "text": USER_MARKER})
    out = send(workspace, model, "I am Dana")
    assert [p["key"] for p in out["proposals"]] == ["user.name"]  # type: ignore[union-attr, index]


def test_extracted_proposals_share_the_per_turn_cap(workspace: Path, script: Script) -> None:
    write_config(
        workspace, '[memory]\nextract = "after_turn"\nmax_proposals_per_turn = 1\n', trusted=True
    )
    model = script(
        {"text": f"Ok. {SESSION_MARKER}"}, {"purpose": "extraction", "text": USER_MARKER}
    )
    out = send(workspace, model, "remember the branch; I am Dana")
    statuses = [(p["scope"], p["status"]) for p in out["proposals"]]  # type: ignore[union-attr, index]
    assert statuses == [("session", "accepted"), ("user", "rejected")]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("colour = 1\n", "colour"),
        ("[memory]\nauto_accept = true\n", "memory.auto_accept"),
        ('[memory]\nextract = "sometimes"\n', "memory.extract"),
        ("[retrieval]\nembeder = 'hashing'\n", "retrieval.embeder"),
        ("[compaction]\nthreshhold = 0.5\n", "compaction.threshhold"),
        ("[profiles.x]\nmodel = 'local'\ncontext_windw = 10\n", "profiles.x.context_windw"),
        (
            "[knowledge_bases.docs]\nkind = 'sqlite_fts'\npath = 'kb.db'\nbogus = 1\n",
            "bogus",
        ),
    ],
)
def test_an_unknown_key_in_any_section_names_the_key_and_the_file(
    workspace: Path, text: str, key: str
) -> None:
    path = write_config(workspace, text, trusted=True)
    result = kx("config", "show", "--workspace", str(workspace))
    assert result.returncode != 0
    [line] = result.stderr.strip().splitlines()
    assert key in line and str(path) in line
