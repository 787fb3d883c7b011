"""Memory export and import: JSON and Markdown round trips, hand-written Markdown, the report."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kairox.app import AppFacade
from kairox.core.errors import InvalidInput
from kairox.core.ids import workspace_id_for
from kairox.core.records import MemoryRecord
from kairox.core.types import Actor, MemoryScope, MemoryStatus
from kairox.memory.transfer import (
    MemoryDraft,
    export_json,
    export_markdown,
    import_drafts,
    parse_json,
    parse_markdown,
)

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def record(
    body: str,
    *,
    key: str | None = "k",
    scope: MemoryScope = MemoryScope.USER,
    status: MemoryStatus = MemoryStatus.ACCEPTED,
) -> MemoryRecord:
    return MemoryRecord(
        id="mem_1",
        scope=scope,
        key=key,
        body=body,
        status=status,
        version=1,
        workspace_id=None,
        session_id=None,
        created_at=NOW,
        updated_at=NOW,
        approved_at=NOW,
        decided_by=None,
        decision_reason=None,
        proposed_session_id=None,
        proposed_turn=None,
        untrusted_inputs=(),
    )


bodies = (
    st.text(
        st.characters(
            blacklist_categories=["Cs"],
            blacklist_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
        ),
        min_size=1,
        max_size=80,
    )
    .map(str.strip)
    .filter(bool)
)
keys = st.from_regex(r"[a-z][a-z0-9._-]{0,20}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(
    body=bodies,
    key=keys,
    scope=st.sampled_from([MemoryScope.USER, MemoryScope.WORKSPACE]),
    status=st.sampled_from(list(MemoryStatus)),
)
def test_both_formats_round_trip_any_body(
    body: str, key: str, scope: MemoryScope, status: MemoryStatus
) -> None:
    records = [record(body, key=key, scope=scope, status=status), record("second", key="z")]
    for drafts in (parse_json(export_json(records)), parse_markdown(export_markdown(records))):
        assert [(d.scope, d.key, d.body, d.status) for d in drafts] == [
            (scope, key, body, status),
            (MemoryScope.USER, "z", "second", MemoryStatus.ACCEPTED),
        ]
        assert drafts[0].updated_at == NOW


def test_markdown_is_readable_and_fences_outgrow_the_body() -> None:
    text = export_markdown([record("has ```` four ticks", key="editor.font")])
    assert "## user: editor.font" in text
    assert "\n`````\nhas ```` four ticks\n`````\n" in text


def test_hand_written_markdown_parses() -> None:
    text = """# My notes

## user: editor.font
JetBrains Mono, size 13

## Workspace : build.cmd

```
make test
```

## session
a passing thought
"""
    drafts = parse_markdown(text)
    assert [(d.scope.value, d.key, d.body) for d in drafts] == [
        ("user", "editor.font", "JetBrains Mono, size 13"),
        ("workspace", "build.cmd", "make test"),
        ("session", None, "a passing thought"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("## galaxy: k\nbody", "unknown memory scope 'galaxy'"),
        ("## user: k\n\n", "empty body"),
        ("## user: k\n```\nnever closed", "never closed"),
        ("prose without sections", "no '## scope: key' sections"),
        ('## user: k\n<!-- kairox-memory {"status": "odd"} -->\nbody', "status"),
    ],
)
def test_bad_markdown_names_the_problem(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_markdown(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON"),
        ('{"format": "other", "version": 1, "memories": []}', "format"),
        ('{"memories": [{"scope": "user", "key": "k"}]}', "body"),
        ('[{"scope": "user", "key": "k", "body": "b", "extra": 1}]', "extra"),
    ],
)
def test_bad_json_names_the_problem(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_json(text)


def test_a_bare_list_of_memories_is_accepted() -> None:
    drafts = parse_json('[{"scope": "workspace", "key": "k", "body": "b"}]')
    assert drafts == [MemoryDraft(scope=MemoryScope.WORKSPACE, key="k", body="b")]


async def test_import_reports_each_memory_and_every_change_is_an_event(
    facade: AppFacade, workspace: Path
) -> None:
    store = facade.services.memories
    ws = workspace_id_for(workspace)
    existing = store.propose(MemoryScope.USER, "font", "Mono", workspace_id=ws, session_id=None)
    store.accept(existing.id, actor=Actor.USER)
    same = store.propose(MemoryScope.USER, "theme", "dark", workspace_id=ws, session_id=None)
    store.accept(same.id, actor=Actor.USER)
    before = await facade.events.last_seq()
    drafts = [
        MemoryDraft(scope=MemoryScope.USER, key="font", body="Fira Code"),
        MemoryDraft(scope=MemoryScope.USER, key="theme", body="dark"),
        MemoryDraft(scope=MemoryScope.WORKSPACE, key="build", body="make"),
        MemoryDraft(
            scope=MemoryScope.WORKSPACE, key="later", body="x", status=MemoryStatus.PENDING
        ),
        MemoryDraft(scope=MemoryScope.SESSION, body="gone"),
        MemoryDraft(scope=MemoryScope.USER, key="old", body="y", status=MemoryStatus.REJECTED),
        MemoryDraft(scope=MemoryScope.USER, key=None, body="keyless"),
    ]
    report = import_drafts(store, drafts, workspace_id=ws)
    assert report.replaced == (existing.id,)
    assert report.unchanged == (same.id,)
    assert len(report.created) == 1 and len(report.pending) == 1
    assert [s.reason for s in report.skipped] == [
        "session memories belong to one session",
        "the memory was rejected",
        "user memory needs a key",
    ]
    assert store.get(existing.id).body == "Fira Code"
    assert store.get(report.pending[0]).status is MemoryStatus.PENDING
    new_events = await facade.events.list(after=before)
    assert [e.type for e in new_events] == [
        "MemoryProposed",
        "MemoryAccepted",  # font replaced
        "MemoryProposed",
        "MemoryAccepted",  # build created
        "MemoryProposed",  # later stays pending
    ]


async def test_facade_export_and_import_use_the_workspace(
    facade: AppFacade, workspace: Path, tmp_path: Path
) -> None:
    store = facade.services.memories
    ws = workspace_id_for(workspace)
    mem = store.propose(MemoryScope.WORKSPACE, "build", "make", workspace_id=ws, session_id=None)
    store.accept(mem.id, actor=Actor.USER)
    text = await facade.memory.export(workspace=workspace, fmt="markdown")
    other = tmp_path / "other"
    other.mkdir()
    report = await facade.memory.import_(text, workspace=other, fmt="markdown")
    assert len(report.created) == 1
    imported = await facade.memory.list(workspace=other)
    assert [(m.key, m.body, m.workspace_id) for m in imported] == [
        ("build", "make", workspace_id_for(other))
    ]
