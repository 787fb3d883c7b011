"""``memory import`` is linear and atomic, caps bodies like the web API, and refuses bad files in
one line with nothing written."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from harden_fakes import Kx

from kairox.app import AppFacade
from kairox.core.errors import InvalidInput
from kairox.core.records import MAX_BODY_CHARS
from kairox.store import memory_import
from kairox.store.events import NewEvent, SqliteEventStore
from kairox.store.keyword_snapshots import KeywordSnapshots
from kairox.store.memory_index import USER_WORKSPACE


def export(n: int, *, body: str | None = None, key: str | None = None) -> str:
    memories = [
        {"scope": "workspace", "key": key or f"fact.{i}", "body": body or f"fact number {i}"}
        for i in range(n)
    ]
    return json.dumps({"memories": memories})


def counts(kx: Kx) -> tuple[int, int]:
    events = json.loads(kx("events", "--json").stdout)
    memories = [e for e in events if e["type"].startswith("Memory")]
    return len(events), len(memories)


async def test_import_cost_per_entry_does_not_grow(workspace: Path, kairox_home: Path) -> None:
    facade = AppFacade.open(kairox_home)
    statements: list[str] = []
    facade.services.db._conn.set_trace_callback(statements.append)
    try:
        per_entry = []
        for n in (100, 400):
            statements.clear()
            seen: list[tuple[int, int]] = []
            report = await facade.memory.import_(
                export(n).replace("fact", f"f{n}"),
                workspace=workspace,
                fmt="json",
                progress=lambda done, total, seen=seen: seen.append((done, total)),
            )
            assert len(report.created) == n and seen[-1] == (n, n)
            per_entry.append(len(statements) / n)
            # Every memory write sits inside one transaction.
            writes = [i for i, s in enumerate(statements) if s.startswith("INSERT INTO memories")]
            begin = max(i for i, s in enumerate(statements[: writes[0]]) if s == "BEGIN IMMEDIATE")
            assert begin < writes[0] and "COMMIT" not in statements[begin : writes[-1]]
        assert per_entry[1] <= per_entry[0] * 1.05
    finally:
        facade.close()


async def test_a_failure_part_way_writes_nothing(
    workspace: Path, kairox_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small batches, and the disk fills up while the third one is written: two batches of
    # events and memory rows are already in the (uncommitted) transaction.
    monkeypatch.setattr(memory_import, "CHUNK", 30)
    calls = {"n": 0}
    real = SqliteEventStore.append_many

    def flaky(self: SqliteEventStore, events: Sequence[NewEvent], **kw: object) -> list[int]:
        seqs = real(self, events, **kw)  # type: ignore[arg-type]
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return seqs

    monkeypatch.setattr(SqliteEventStore, "append_many", flaky)
    facade = AppFacade.open(kairox_home)
    try:
        before = facade.services.events.last_seq()
        with pytest.raises(OSError):
            await facade.memory.import_(export(100), workspace=workspace, fmt="json")
        assert calls["n"] == 3
        assert facade.services.events.last_seq() == before
        assert await facade.memory.list(workspace=workspace) == []
        # and the next import starts cleanly
        monkeypatch.setattr(SqliteEventStore, "append_many", real)
        report = await facade.memory.import_(export(100), workspace=workspace, fmt="json")
        assert len(report.created) == 100
    finally:
        facade.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"memories": [{"scope": "user", "key": "k", "body": "caf\xe9"}]}', "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nests JSON too deeply"),
        (export(3, body="x" * (MAX_BODY_CHARS + 1)).encode(), "at most 100000 characters"),
        (export(3, key="evil\u202ekey").encode(), "bidirectional control"),
        (export(3, key="two\nlines").encode(), "control character"),
        (b'[{"scope": "user", "key": "k", "body": "shown", "body": "hidden"}]', "repeats"),
    ],
    ids=["utf8", "deep", "body-cap", "bidi-key", "newline-key", "duplicate-key"],
)
def test_bad_import_files_are_one_line_and_write_nothing(
    workspace: Path, tmp_path: Path, kx: Kx, content: bytes, message: str
) -> None:
    good = tmp_path / "good.json"
    good.write_text(export(2))
    assert kx("memory", "import", str(good), "--workspace", str(workspace)).returncode == 0
    before = counts(kx)
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    result = kx("memory", "import", str(bad), "--workspace", str(workspace))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and message in line
    assert counts(kx) == before


async def test_facade_refuses_invalid_utf8_bytes(workspace: Path, kairox_home: Path) -> None:
    facade = AppFacade.open(kairox_home)
    try:
        with pytest.raises(InvalidInput, match="not UTF-8"):
            await facade.memory.import_(b"\xff\xfe{", workspace=workspace, fmt="json")
    finally:
        facade.close()


async def test_a_large_import_does_not_make_every_later_turn_rank_it_all(
    workspace: Path, tmp_path: Path, kairox_home: Path, kx: Kx
) -> None:
    """200,000 imported user memories made every later ``send`` in any workspace take 73 s: each
    turn loaded, counted, ranked and traced all of them, and wrote a 268 KB ``ContextAssembled``.
    A turn loads at most ``CONTEXT_MEMORIES`` (the most recently updated) and considers the
    ``TURN_MEMORIES`` most relevant of them: its trace stays under 16 KB."""
    from kairox.context.assembler import TURN_MEMORIES
    from kairox.store.memories import CONTEXT_MEMORIES

    n = CONTEXT_MEMORIES * 3
    doc = json.dumps(
        {
            "memories": [
                {"scope": "user", "key": f"u.{i}", "body": f"user fact {i}"} for i in range(n)
            ]
            + [{"scope": "user", "key": "pet.name", "body": "the cat is called Miso"}]
        }
    )
    facade = AppFacade.open(kairox_home)
    try:
        report = await facade.memory.import_(doc, workspace=workspace, fmt="json")
        assert len(report.created) == n + 1
    finally:
        facade.close()
    script = tmp_path / "reply.jsonl"
    script.write_text('{"text": "ok"}\n')
    other = tmp_path / "another-workspace"
    other.mkdir()
    prompt = "what is my cat called?"
    result = kx("send", "--workspace", str(other), "--model", f"scripted:{script}", prompt)
    assert result.returncode == 0, result.stderr
    trace = json.loads(kx("context", "--workspace", str(other), "--json").stdout)
    considered = [i for i in trace["items"] if i["source"] == "memory"]
    assert len(considered) == TURN_MEMORIES
    newest = {f"user:u.{i}" for i in range(n + 1 - CONTEXT_MEMORIES, n)} | {"user:pet.name"}
    assert {i["source_name"] for i in considered} <= newest
    assert "user:pet.name" in {i["source_name"] for i in considered if i["included"]}
    events = json.loads(kx("events", "--workspace", str(other), "--json").stdout)
    assembled = [e for e in events if e["type"] == "ContextAssembled"]
    assert assembled and all(len(json.dumps(e)) < 16 * 1024 for e in assembled)
    # Memories are traced by reference (``mem:<id>@v<version>``), never by their bodies.
    assert all(i["ref"].startswith("mem:") for i in considered)
    assert not any("the cat is called Miso" in json.dumps(e) for e in assembled)


async def test_import_fills_the_memory_index(
    workspace: Path, kairox_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import embeds and indexes what it wrote (a batch per transaction, progress shown) and
    saves the keyword index, so the first search afterwards has nothing to catch up or build."""
    from kairox.retrieval import keyword_side, memory_index
    from kairox.store.keyword_snapshots import KeywordSnapshots
    from kairox.store.memory_index import USER_WORKSPACE

    monkeypatch.setattr(memory_index, "EMBED_BATCH", 64)
    monkeypatch.setattr(keyword_side, "SAVE_CHANGES", 50)
    facade = AppFacade.open(kairox_home)
    try:
        n = 300
        indexed: list[tuple[int, int]] = []
        report = await facade.memory.import_(
            export(n),
            workspace=workspace,
            fmt="json",
            index_progress=lambda done, total: indexed.append((done, total)),
        )
        assert len(report.created) == n
        assert indexed[-1] == (n, n) and len(indexed) == 5  # batches of 64
        store = facade.services.memory_index
        assert store.last_seq() == facade.services.events.last_seq()
        assert store.count_missing_vectors("hashing:384") == 0
        # ... and recorded so: a later search or turn reads one row, never counts the vectors.
        assert store.embedded_at("hashing:384") == store.generation(USER_WORKSPACE)
        ws_id = facade.memory.view(workspace).workspace_id
        assert len(store.keyword_keys(ws_id)) == n
        assert isinstance(store, KeywordSnapshots)
        saved = store.load_keyword_snapshot(ws_id)
        assert saved is not None and saved.generation == store.generation(ws_id)
        assert store.load_keyword_snapshot(USER_WORKSPACE) is None  # no user memory to save
        # A search in a fresh facade reads no memory event and embeds nothing.
        fresh = AppFacade.open(kairox_home)
        try:

            def no_count(*args: object) -> int:
                raise AssertionError("the vectors were counted")

            monkeypatch.setattr(type(store), "count_missing_vectors", no_count)
            index = fresh.sources.memory_index("hashing")
            assert index.catch_up() == 0 and index.embed_missing() == 0
            hits = await fresh.memory.search("fact number 7", workspace=workspace, k=3)
            assert hits[0].record.body == "fact number 7"
        finally:
            fresh.close()
    finally:
        facade.close()


async def test_a_workspace_without_memories_of_its_own_ranks_in_the_users_scope(
    workspace: Path, tmp_path: Path, kairox_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """User memories are seen from every workspace: a search from a workspace that holds none of
    its own ranks the user's index (the same units and statistics) instead of copying it into a
    keyword index of its own; its first memory gives it one."""
    from kairox.core.types import MemoryScope
    from kairox.retrieval import keyword_side

    monkeypatch.setattr(keyword_side, "SAVE_CHANGES", 50)
    doc = json.dumps(
        {
            "memories": [
                {"scope": "user", "key": f"u.{i}", "body": f"user fact {i}"} for i in range(200)
            ]
        }
    )
    other = tmp_path / "other-workspace"
    other.mkdir()
    facade = AppFacade.open(kairox_home)
    try:
        await facade.memory.import_(doc, workspace=workspace, fmt="json")
        store = facade.services.memory_index
        assert isinstance(store, KeywordSnapshots)
        other_id = facade.memory.view(other).workspace_id
        hits = await facade.memory.search("user fact 17", workspace=other, k=3)
        assert hits[0].record.body == "user fact 17"
        index = facade.sources.memory_index("hashing")
        assert index.scope(other_id) == USER_WORKSPACE
        assert store.load_keyword_snapshot(USER_WORKSPACE) is not None
        saved = store.load_keyword_snapshot(other_id)  # none of its own: the user's, at -2
        assert saved is not None and saved.generation == -2
        await facade.memory.add(
            workspace=other,
            session=None,
            scope=MemoryScope.WORKSPACE,
            key="own",
            body="user fact of other",
        )
        hits = await facade.memory.search("fact of other", workspace=other, k=3)
        assert hits[0].record.body == "user fact of other"
        assert index.scope(other_id) == other_id
        assert not any(
            h.record.body == "user fact of other"
            for h in await facade.memory.search("fact of other", workspace=workspace, k=5)
        )
    finally:
        facade.close()
