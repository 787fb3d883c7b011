"""Contract suite for ``MemoryStore``, run against every backend."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kairox.core.errors import InvalidInput, MemoryDecisionError, NotFound
from kairox.core.events import UntrustedInput
from kairox.core.records import MAX_BODY_CHARS, MemoryImport, MemoryView
from kairox.core.types import Actor, MemoryScope, MemoryStatus
from kairox.store import memory_import
from kairox.store.db import Database
from kairox.store.events import SqliteEventStore
from kairox.store.memories import SqliteMemoryStore
from kairox.store.protocols import EventStore, MemoryStore
from kairox.testing import FakeClock


def _sqlite_file(tmp: Path) -> tuple[MemoryStore, EventStore]:
    clock = FakeClock()
    db = Database.open(tmp / "home.db")
    events = SqliteEventStore(db, clock)
    return SqliteMemoryStore(db, events, clock), events


def _sqlite_memory(tmp: Path) -> tuple[MemoryStore, EventStore]:
    clock = FakeClock()
    db = Database.open(":memory:")
    events = SqliteEventStore(db, clock)
    return SqliteMemoryStore(db, events, clock), events


def _postgres(url: str) -> tuple[MemoryStore, EventStore]:
    from kairox.store.postgres import open_postgres

    backend = open_postgres(url, FakeClock())
    return backend.memories, backend.events


BACKENDS: dict[str, Callable[[Path], tuple[MemoryStore, EventStore]]] = {
    "sqlite-file": _sqlite_file,
    "sqlite-memory": _sqlite_memory,
}

WS = MemoryView(workspace_id="ws_a", session_id="ses_1")
OTHER_WS = MemoryView(workspace_id="ws_b", session_id="ses_2")


@pytest.fixture(params=[*sorted(BACKENDS), "postgres"])
def backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[MemoryStore, EventStore]]:
    if request.param == "postgres":
        yield _postgres(request.getfixturevalue("pg_url"))
    else:
        yield BACKENDS[request.param](tmp_path)


@pytest.fixture
def store(backend: tuple[MemoryStore, EventStore]) -> MemoryStore:
    return backend[0]


def _types(events: EventStore) -> list[str]:
    return [e.type for e in events.read()]


def propose(
    store: MemoryStore, scope: MemoryScope, key: str | None, body: str, view: MemoryView = WS
) -> str:
    return store.propose(
        scope, key, body, workspace_id=view.workspace_id, session_id=view.session_id, turn=1
    ).id


def test_proposal_is_pending_with_provenance(store: MemoryStore) -> None:
    rec = store.propose(
        MemoryScope.USER,
        "editor.font",
        "  JetBrains Mono  ",
        workspace_id="ws_a",
        session_id="ses_1",
        turn=3,
        untrusted_inputs=[UntrustedInput(kind="tool_result", ref="seq:7")],
    )
    assert rec.status is MemoryStatus.PENDING
    assert rec.body == "JetBrains Mono"
    assert rec.approved_at is None
    assert (rec.proposed_session_id, rec.proposed_turn) == ("ses_1", 3)
    assert rec.untrusted_inputs[0].ref == "seq:7"
    assert rec.workspace_id is None and rec.session_id is None  # user memory has no owner ids


def test_every_change_is_an_event(backend: tuple[MemoryStore, EventStore]) -> None:
    store, events = backend
    mid = propose(store, MemoryScope.WORKSPACE, "commit.style", "Conventional Commits")
    store.accept(mid, actor=Actor.USER)
    store.edit(mid, "Conventional Commits with scope", actor=Actor.USER)
    store.delete(mid, actor=Actor.USER)
    assert _types(events) == ["MemoryProposed", "MemoryAccepted", "MemoryEdited", "MemoryDeleted"]


def test_accept_sets_approved_at_except_for_session(store: MemoryStore) -> None:
    user = store.accept(propose(store, MemoryScope.USER, "k", "v"), actor=Actor.USER)
    assert user.status is MemoryStatus.ACCEPTED and user.approved_at is not None
    session = store.accept(propose(store, MemoryScope.SESSION, None, "fact"), actor=Actor.POLICY)
    assert session.status is MemoryStatus.ACCEPTED and session.approved_at is None


def test_same_key_overwrites_never_duplicates(store: MemoryStore) -> None:
    first = store.accept(
        propose(store, MemoryScope.USER, "editor.font", "Fira 12"), actor=Actor.USER
    )
    second_id = propose(store, MemoryScope.USER, "editor.font", "JetBrains Mono 14")
    assert store.get(second_id).status is MemoryStatus.PENDING
    merged = store.accept(second_id, actor=Actor.USER)
    assert merged.id == first.id
    assert merged.body == "JetBrains Mono 14"
    accepted = store.list(WS, statuses=[MemoryStatus.ACCEPTED])
    assert [(m.key, m.body) for m in accepted] == [("editor.font", "JetBrains Mono 14")]
    bodies = [v.body for v in store.history(first.id)]
    assert "Fira 12" in bodies and bodies[-1] == "JetBrains Mono 14"
    assert store.get(second_id).id == first.id  # the proposal id still resolves


def test_a_new_memory_is_v1_at_its_first_acceptance(store: MemoryStore) -> None:
    mid = propose(store, MemoryScope.USER, "editor.font", "Fira 12")
    assert store.get(mid).version == 0  # a proposal is no version yet
    accepted = store.accept(mid, actor=Actor.USER)
    assert accepted.version == 1
    replaced = store.accept(
        propose(store, MemoryScope.USER, "editor.font", "Mono 14"), actor=Actor.USER
    )
    assert replaced.id == mid and replaced.version == 2
    assert store.edit(mid, "Mono 15", actor=Actor.USER).version == 3
    history = [(v.action, v.version) for v in store.history(mid)]
    assert history == [("propose", 0), ("accept", 1), ("propose", 0), ("replace", 2), ("edit", 3)]
    imported = store.import_many(
        [MemoryImport(scope=MemoryScope.USER, key="theme", body="dark")],
        workspace_id="ws_a",
        actor=Actor.USER,
    )
    assert store.get(imported[0].memory_id).version == 1


def test_a_key_lists_as_its_live_row_with_rejected_proposals_in_its_history(
    store: MemoryStore,
) -> None:
    rejected = propose(store, MemoryScope.USER, "editor.font", "Comic Sans")
    store.reject(rejected, actor=Actor.USER)
    live = store.accept(
        propose(store, MemoryScope.USER, "editor.font", "Fira 12"), actor=Actor.USER
    )
    everything = store.list(WS)
    assert [(m.key, m.status) for m in everything] == [("editor.font", MemoryStatus.ACCEPTED)]
    assert store.list(WS, statuses=[MemoryStatus.ACCEPTED, MemoryStatus.REJECTED]) == everything
    history = [(v.action, v.body) for v in store.history(live.id)]
    assert ("reject", "Comic Sans") in history and history[-1] == ("accept", "Fira 12")
    # Asked for rejected proposals only, they are listed; the rejected id still reads as itself.
    assert [m.id for m in store.list(WS, statuses=[MemoryStatus.REJECTED])] == [rejected]
    assert store.get(rejected).status is MemoryStatus.REJECTED
    # A key without a live row lists what it has.
    store.reject(propose(store, MemoryScope.USER, "theme", "neon"), actor=Actor.USER)
    assert [m.key for m in store.list(WS)] == ["editor.font", "theme"]


def test_proposal_records_the_body_it_would_replace(
    backend: tuple[MemoryStore, EventStore],
) -> None:
    store, events = backend
    store.accept(propose(store, MemoryScope.USER, "k", "old"), actor=Actor.USER)
    propose(store, MemoryScope.USER, "k", "new")
    last = events.read(types=["MemoryProposed"])[-1].payload
    assert getattr(last, "replaces_body", None) == "old"


def test_decisions_are_idempotent(backend: tuple[MemoryStore, EventStore]) -> None:
    store, events = backend
    mid = propose(store, MemoryScope.WORKSPACE, "k", "v")
    store.accept(mid, actor=Actor.USER)
    store.accept(mid, actor=Actor.USER)
    assert _types(events).count("MemoryAccepted") == 1
    rid = propose(store, MemoryScope.WORKSPACE, "k2", "v")
    store.reject(rid, actor=Actor.USER)
    store.reject(rid, actor=Actor.USER)
    assert _types(events).count("MemoryRejected") == 1


def test_conflicting_decision_is_refused_and_changes_nothing(
    backend: tuple[MemoryStore, EventStore],
) -> None:
    store, events = backend
    mid = propose(store, MemoryScope.USER, "k", "v")
    store.reject(mid, actor=Actor.USER)
    before = events.last_seq()
    with pytest.raises(MemoryDecisionError, match="already rejected"):
        store.accept(mid, actor=Actor.USER)
    assert events.last_seq() == before
    assert store.get(mid).status is MemoryStatus.REJECTED


def test_unknown_id_is_not_found(store: MemoryStore) -> None:
    with pytest.raises(NotFound):
        store.get("mem_nope")
    with pytest.raises(NotFound):
        store.accept("mem_nope", actor=Actor.USER)


def test_workspaces_are_isolated(store: MemoryStore) -> None:
    store.accept(propose(store, MemoryScope.WORKSPACE, "k", "A only"), actor=Actor.USER)
    store.accept(propose(store, MemoryScope.WORKSPACE, "k", "B only", OTHER_WS), actor=Actor.USER)
    store.accept(propose(store, MemoryScope.USER, "u", "everyone"), actor=Actor.USER)
    assert {m.body for m in store.for_context(WS)} == {"A only", "everyone"}
    assert {m.body for m in store.for_context(OTHER_WS)} == {"B only", "everyone"}


def test_session_memory_belongs_to_its_session(store: MemoryStore) -> None:
    store.accept(propose(store, MemoryScope.SESSION, None, "mine"), actor=Actor.POLICY)
    same_ws_other_session = MemoryView(workspace_id="ws_a", session_id="ses_9")
    assert [m.body for m in store.for_context(WS)] == ["mine"]
    assert store.for_context(same_ws_other_session) == []


def test_edit_history_and_undo(store: MemoryStore) -> None:
    mid = store.accept(propose(store, MemoryScope.USER, "k", "v1"), actor=Actor.USER).id
    store.edit(mid, "v2", actor=Actor.USER)
    assert store.get(mid).body == "v2"
    assert store.undo(mid, actor=Actor.USER).body == "v1"
    assert [v.action for v in store.history(mid)] == ["propose", "accept", "edit", "undo"]


def test_undo_delete_restores(store: MemoryStore) -> None:
    mid = store.accept(propose(store, MemoryScope.USER, "k", "v"), actor=Actor.USER).id
    store.delete(mid, actor=Actor.USER)
    assert store.for_context(WS) == []
    restored = store.undo(mid, actor=Actor.USER)
    assert restored.status is MemoryStatus.ACCEPTED
    assert [m.id for m in store.for_context(WS)] == [mid]


def test_undo_with_nothing_to_undo(store: MemoryStore) -> None:
    mid = propose(store, MemoryScope.USER, "k", "v")
    with pytest.raises(InvalidInput, match=r"nothing|no edit"):
        store.undo(mid, actor=Actor.USER)


def test_undoable_says_where_undo_applies(store: MemoryStore) -> None:
    fresh = store.accept(propose(store, MemoryScope.USER, "a", "v1"), actor=Actor.USER).id
    edited = store.accept(propose(store, MemoryScope.USER, "b", "v1"), actor=Actor.USER).id
    deleted = store.accept(propose(store, MemoryScope.USER, "c", "v1"), actor=Actor.USER).id
    pending = propose(store, MemoryScope.USER, "d", "v1")
    store.edit(edited, "v2", actor=Actor.USER)
    store.delete(deleted, actor=Actor.USER)
    ids = [fresh, edited, deleted, pending, "mem_missing"]
    assert store.undoable(ids) == {edited, deleted} and store.undoable([]) == set()
    with pytest.raises(InvalidInput):
        store.undo(fresh, actor=Actor.USER)  # what undoable leaves out, undo refuses
    store.undo(edited, actor=Actor.USER)
    store.undo(deleted, actor=Actor.USER)
    assert store.undoable(ids) == set()


def test_user_scope_requires_key(store: MemoryStore) -> None:
    with pytest.raises(InvalidInput, match="needs a key"):
        store.propose(MemoryScope.USER, None, "v", workspace_id="ws_a", session_id="s")


def test_list_filters(store: MemoryStore) -> None:
    a = propose(store, MemoryScope.USER, "editor.font", "Mono")
    propose(store, MemoryScope.WORKSPACE, "style", "Black")
    store.accept(a, actor=Actor.USER)
    assert [m.key for m in store.list(WS, scopes=[MemoryScope.USER])] == ["editor.font"]
    assert [m.key for m in store.list(WS, statuses=[MemoryStatus.PENDING])] == ["style"]
    assert [m.key for m in store.list(WS, text="mono")] == ["editor.font"]


def test_list_of_many_ids_reads_them_in_batches_as_one_list(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ids`` longer than one ``IN`` list (``IN_BATCH``) lists what one statement would: the
    same rows in creation order, and with ``newest`` the newest of them all."""
    from kairox.store import memory_reads

    ids = [propose(store, MemoryScope.WORKSPACE, f"k{i}", f"body {i}") for i in range(7)]
    wanted = [*reversed(ids), "mem_unknown"]
    whole = [m.id for m in store.list(WS, ids=wanted)]
    newest = [m.id for m in store.list(WS, ids=wanted, newest=3)]
    assert sorted(whole) == sorted(ids) and len(newest) == 3
    monkeypatch.setattr(memory_reads, "IN_BATCH", 2)
    assert [m.id for m in store.list(WS, ids=wanted)] == whole
    assert [m.id for m in store.list(WS, ids=wanted, newest=3)] == newest


def test_keyed_session_memory_overwrites_and_stays_unapproved(store: MemoryStore) -> None:
    first = store.accept(
        propose(store, MemoryScope.SESSION, "goal", "fix the bug"), actor=Actor.POLICY
    )
    second = store.accept(
        propose(store, MemoryScope.SESSION, "goal", "write the docs"), actor=Actor.POLICY
    )
    assert second.id == first.id and second.body == "write the docs"
    assert second.approved_at is None
    assert [m.body for m in store.for_context(WS)] == ["write the docs"]


def test_an_identical_proposal_is_a_no_op_and_found_by_identical(
    backend: tuple[MemoryStore, EventStore],
) -> None:
    store, events = backend
    accepted = store.accept(propose(store, MemoryScope.USER, "k", "Tabs."), actor=Actor.USER)
    pending = propose(store, MemoryScope.SESSION, None, "Scratch.")
    before = len(events.read())
    assert propose(store, MemoryScope.USER, "k", "Tabs.") == accepted.id
    assert propose(store, MemoryScope.SESSION, None, "  Scratch. ") == pending
    assert len(events.read()) == before  # nothing written
    found = store.identical(
        MemoryScope.USER, "k", "Tabs.", workspace_id=WS.workspace_id, session_id=WS.session_id
    )
    assert found is not None and found.id == accepted.id
    assert (
        store.identical(
            MemoryScope.SESSION, None, "Other.", workspace_id="ws_a", session_id="ses_1"
        )
        is None
    )


def test_a_pending_change_shows_the_body_it_replaces_and_ids_resolve_by_prefix(
    store: MemoryStore,
) -> None:
    store.accept(propose(store, MemoryScope.USER, "k", "old"), actor=Actor.USER)
    change = propose(store, MemoryScope.USER, "k", "new")
    assert store.get(change).replaces_body == "old"
    assert store.get(change.removeprefix("mem_")[:20]).id == change


# -- import_many: propose + accept per entry, in batches -------------------------------------


def _one_by_one(store: MemoryStore, entries: list[MemoryImport], workspace_id: str) -> None:
    """What ``import_many`` must equal: each entry proposed, then accepted unless pending."""
    for entry in entries:
        live = [
            m
            for m in store.list(MemoryView(workspace_id), statuses=[MemoryStatus.ACCEPTED])
            if (m.scope, m.key) == (entry.scope, entry.key)
        ]
        if live and live[0].body == entry.body.strip():
            continue
        proposal = store.propose(
            entry.scope, entry.key, entry.body, workspace_id=workspace_id, session_id=None
        )
        if entry.accept:
            store.accept(proposal.id, actor=Actor.USER)


def _snapshot(store: MemoryStore, events: EventStore, workspace_id: str) -> object:
    """The workspace's log and projection with memory ids numbered by first appearance."""
    names: dict[str, str] = {}

    def name(memory_id: str | None) -> str | None:
        return None if memory_id is None else names.setdefault(memory_id, f"m{len(names)}")

    log = []
    for event in events.read():
        if event.workspace_id != workspace_id:
            continue
        data = event.payload.model_dump(mode="json")
        for field in ("memory_id", "replaced_memory_id"):
            if field in data:
                data[field] = name(data[field])
        log.append(data)
    memories = store.list(MemoryView(workspace_id))
    rows = {
        name(m.id): (m.key, m.body, m.status.value, m.version, m.decided_by, bool(m.approved_at))
        for m in memories
    }
    history = {
        name(m.id): [
            (v.version, v.action, v.body, v.status.value, name(v.source_memory_id))
            for v in store.history(m.id)
        ]
        for m in memories
    }
    return log, rows, history


def test_import_many_is_propose_and_accept_per_entry(
    backend: tuple[MemoryStore, EventStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, events = backend
    monkeypatch.setattr(memory_import, "CHUNK", 4)  # keys change across batches
    rng = random.Random(7)
    entries = [
        MemoryImport(
            MemoryScope.WORKSPACE,
            rng.choice("abc"),
            rng.choice(["x", "y", " z "]),
            rng.random() < 0.7,
        )
        for _ in range(40)
    ]
    for ws in ("ws_seq", "ws_bulk"):  # the same starting point: a live key and a pending one
        store.accept(
            store.propose(MemoryScope.WORKSPACE, "a", "x", workspace_id=ws, session_id=None).id,
            actor=Actor.USER,
        )
        store.propose(MemoryScope.WORKSPACE, "b", "y", workspace_id=ws, session_id=None)
    _one_by_one(store, entries, "ws_seq")
    seen: list[tuple[int, int]] = []
    results = store.import_many(
        entries,
        workspace_id="ws_bulk",
        actor=Actor.USER,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert _snapshot(store, events, "ws_bulk") == _snapshot(store, events, "ws_seq")
    assert seen == [(4 * i, 40) for i in range(1, 11)]
    assert {r.outcome for r in results} == {"created", "replaced", "pending", "unchanged"}
    for entry, result in zip(entries, results, strict=True):
        assert store.get(result.memory_id).key == entry.key  # every id resolves, folded or not
    # Every version row points at the event of the log that made it.
    for memory in store.list(MemoryView("ws_bulk")):
        for version in store.history(memory.id):
            event = events.get(version.event_seq)
            assert event is not None and event.workspace_id in ("ws_bulk", None)
            assert getattr(event.payload, "body", version.body) == version.body


def test_import_many_outcomes_and_user_scope(backend: tuple[MemoryStore, EventStore]) -> None:
    store, events = backend
    old = store.accept(propose(store, MemoryScope.USER, "font", "Mono"), actor=Actor.USER)
    waiting = propose(store, MemoryScope.WORKSPACE, "style", "Black")
    before = events.last_seq()
    results = store.import_many(
        [
            MemoryImport(MemoryScope.USER, "font", "Fira"),  # replaced
            MemoryImport(MemoryScope.USER, "font", " Fira "),  # identical now: unchanged
            MemoryImport(MemoryScope.WORKSPACE, "style", "Black", accept=False),  # no-op
            MemoryImport(MemoryScope.WORKSPACE, "style", "Black"),  # accepts the pending one
            MemoryImport(MemoryScope.WORKSPACE, "new", "fresh"),  # created
        ],
        workspace_id=WS.workspace_id,
        actor=Actor.USER,
    )
    assert [(r.memory_id, r.outcome) for r in results[:4]] == [
        (old.id, "replaced"),
        (old.id, "unchanged"),
        (waiting, "pending"),
        (waiting, "created"),
    ]
    assert results[4].outcome == "created"
    assert [e.type for e in events.read(after=before)] == [
        "MemoryProposed",
        "MemoryAccepted",
        "MemoryAccepted",
        "MemoryProposed",
        "MemoryAccepted",
    ]
    accepted = store.list(WS, statuses=[MemoryStatus.ACCEPTED])
    assert sorted((m.key, m.body) for m in accepted) == [
        ("font", "Fira"),
        ("new", "fresh"),
        ("style", "Black"),
    ]
    assert store.get(old.id).version == 2  # the key keeps its one row: v1 accepted, v2 replaced
    assert [v.action for v in store.history(old.id)] == ["propose", "accept", "propose", "replace"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (MemoryImport(MemoryScope.USER, "k3", "   "), r"entry 3 \(user: k3\).*empty"),
        (MemoryImport(MemoryScope.WORKSPACE, "", "v"), r"entry 3 .*needs a key"),
        (MemoryImport(MemoryScope.SESSION, "k3", "v"), r"entry 3 .*session"),
        (MemoryImport(MemoryScope.USER, "k3", "x" * (MAX_BODY_CHARS + 1)), r"entry 3 .*at most"),
    ],
    ids=["empty", "no-key", "session", "too-long"],
)
def test_import_many_is_all_or_nothing(
    backend: tuple[MemoryStore, EventStore], bad: MemoryImport, message: str
) -> None:
    store, events = backend
    good = [MemoryImport(MemoryScope.USER, "k1", "v1"), MemoryImport(MemoryScope.USER, "k2", "v")]
    with pytest.raises(InvalidInput, match=message):
        store.import_many([*good, bad], workspace_id=WS.workspace_id, actor=Actor.USER)
    assert events.last_seq() == 0
    assert store.list(WS) == []
    assert store.import_many([], workspace_id=WS.workspace_id, actor=Actor.USER) == []


def test_a_large_import_fits_the_lock_table(backend: tuple[MemoryStore, EventStore]) -> None:
    """An import of many keys in one transaction (on Postgres it holds at most 1,024 key locks,
    whatever the number of keys)."""
    store, _events = backend
    entries = [MemoryImport(MemoryScope.WORKSPACE, f"k{i}", f"body {i}") for i in range(12_000)]
    results = store.import_many(entries, workspace_id="ws_big", actor=Actor.USER)
    assert len(results) == 12_000 and {r.outcome for r in results} == {"created"}
    assert len(store.list(MemoryView("ws_big"), statuses=[MemoryStatus.ACCEPTED])) == 12_000


def test_a_proposal_to_delete_waits_and_approving_it_deletes_the_memory(
    backend: tuple[MemoryStore, EventStore],
) -> None:
    store, events = backend
    memory = store.accept(
        propose(store, MemoryScope.WORKSPACE, "db", "Postgres 16"), actor=Actor.USER
    )
    ask = store.propose(
        MemoryScope.WORKSPACE, "db", "", workspace_id="ws_a", session_id=None, forget=True
    )
    assert (ask.status, ask.forget, ask.body) == (MemoryStatus.PENDING, True, "Postgres 16")
    again = store.propose(
        MemoryScope.WORKSPACE, "db", "", workspace_id="ws_a", session_id=None, forget=True
    )
    assert again.id == ask.id  # one pending deletion per key
    # A new proposal with the memory's own body is still a duplicate of the memory itself.
    assert store.identical(
        MemoryScope.WORKSPACE, "db", "Postgres 16", workspace_id="ws_a", session_id=None
    ) == store.get(memory.id)
    assert store.get(memory.id).status is MemoryStatus.ACCEPTED  # nothing happened yet
    deleted = store.accept(ask.id, actor=Actor.USER)
    assert (deleted.id, deleted.status) == (memory.id, MemoryStatus.DELETED)
    assert store.get(ask.id).id == memory.id  # the proposal's id resolves to the memory
    assert [v.action for v in store.history(memory.id)] == [
        "propose",
        "accept",
        "propose",
        "delete",
    ]
    [last] = events.read(types=["MemoryDeleted"])
    assert last.payload.proposal_id == ask.id  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="no accepted workspace memory 'db' to delete"):
        store.propose(
            MemoryScope.WORKSPACE, "db", "", workspace_id="ws_a", session_id=None, forget=True
        )


def test_a_rejected_proposal_to_delete_leaves_the_memory(store: MemoryStore) -> None:
    memory = store.accept(propose(store, MemoryScope.USER, "shell", "fish"), actor=Actor.USER)
    ask = store.propose(
        MemoryScope.USER, "shell", "", workspace_id="ws_a", session_id=None, forget=True
    )
    store.reject(ask.id, actor=Actor.USER)
    assert store.get(memory.id).status is MemoryStatus.ACCEPTED
    assert store.get(ask.id).status is MemoryStatus.REJECTED


def test_for_context_is_the_newest_accepted_of_every_owner_in_view(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn reads the ``CONTEXT_MEMORIES`` most recently updated accepted memories of the
    workspace, the user and the session together (one owner a statement), in creation order."""
    from kairox.store import memory_reads

    monkeypatch.setattr(memory_reads, "CONTEXT_MEMORIES", 4)
    clock = store.clock  # type: ignore[attr-defined]
    made: list[str] = []
    for i, scope in enumerate([MemoryScope.USER, MemoryScope.WORKSPACE, MemoryScope.SESSION] * 2):
        clock.advance()
        key = None if scope is MemoryScope.SESSION else f"k{i}"
        made.append(store.accept(propose(store, scope, key, f"fact {i}"), actor=Actor.USER).id)
    clock.advance()
    propose(store, MemoryScope.USER, "waiting", "pending, never in context")
    store.accept(propose(store, MemoryScope.WORKSPACE, "k9", "B's", OTHER_WS), actor=Actor.USER)
    clock.advance()
    store.edit(made[0], "fact 0, edited last", actor=Actor.USER)  # the newest update
    found = store.for_context(WS)
    assert [m.id for m in found] == [made[0], made[3], made[4], made[5]]
    assert found == store.list(WS, statuses=[MemoryStatus.ACCEPTED], newest=4)
