"""The history index: incremental catch-up from the log, units with their seq/session/turn/role/
speaker/time, scopes (a session, a workspace, never another workspace), and the tool."""

from __future__ import annotations

import json
from pathlib import Path

from kairox.core.clock import isoformat
from kairox.core.events import (
    AssistantMessageCompleted,
    ModelTokenDelta,
    ToolInvocationCompleted,
    UserMessageAdded,
)
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.history import HistoryIndex
from kairox.runtime.recall import neutralise_markers, tool_text
from kairox.runtime.tools import BuiltinTools
from kairox.services import Services
from kairox.store.records import SessionInfo
from kairox.testing.clock import FakeClock


def open_home(tmp_path: Path) -> tuple[Services, FakeClock]:
    clock = FakeClock()
    return Services.open(tmp_path / "home", clock=clock), clock


def say(services: Services, session: SessionInfo, *payloads: object) -> list[int]:
    seqs = []
    for payload in payloads:
        event = services.events.append(
            payload,  # type: ignore[arg-type]
            session_id=session.id,
            workspace_id=session.workspace_id,
        )
        seqs.append(event.seq)
    return seqs


def test_units_are_indexed_incrementally_with_their_metadata(tmp_path: Path) -> None:
    services, clock = open_home(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    session = services.sessions.start("main", ws, "local")
    index = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    assert index.catch_up() == 0 and index.store.unit_count() == 0
    clock.advance(60)
    user, delta, reply, tool = say(
        services,
        session,
        UserMessageAdded(turn=1, text="Where is the deploy checklist?"),
        ModelTokenDelta(turn=1, text="partial"),
        AssistantMessageCompleted(turn=1, text="In docs/deploy.md.", model="openai:gpt-x"),
        ToolInvocationCompleted(
            turn=1, call_id="c1", name="read_file", arguments='{"path": "a"}', result="alpha"
        ),
    )
    assert index.catch_up() == 3  # the token delta is not conversation
    assert index.store.last_seq() == tool
    units = {u.id: u for u in index.store.get_units([user, delta, reply, tool])}
    assert set(units) == {user, reply, tool}
    first = units[user]
    assert (first.session_id, first.workspace_id, first.turn) == (
        session.id,
        session.workspace_id,
        1,
    )
    assert (first.role, first.speaker, first.ts) == ("user", "user", isoformat(clock.now()))
    assert (units[reply].role, units[reply].speaker) == ("assistant", "openai:gpt-x")
    assert units[reply].context == "Where is the deploy checklist?"  # its neighbour
    assert (units[tool].role, units[tool].speaker) == ("tool", "read_file")
    assert units[tool].content == 'read_file({"path": "a"})\nalpha'

    # Appending more indexes only the new events; nothing is rebuilt.
    [later] = say(services, session, UserMessageAdded(turn=2, text="And the rollback plan?"))
    assert index.catch_up() == 1 and index.catch_up() == 0
    assert index.store.unit_count(session.workspace_id) == 4
    assert index.embed_missing(session.workspace_id) == 4
    assert index.embed_missing(session.workspace_id) == 0
    [hit] = index.search("rollback plan", workspace_id=session.workspace_id, k=1)
    assert (hit.seq, hit.session, hit.turn, hit.speaker) == (later, "main", 2, "user")
    assert hit.ts == clock.now() and hit.date == clock.now().strftime("%Y-%m-%d %H:%M UTC")
    # A second index over the same home (another process) sees the same units.
    other = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    assert other.catch_up() == 0
    services.close()


def test_scopes_a_session_a_workspace_and_never_another_workspace(tmp_path: Path) -> None:
    services, _ = open_home(tmp_path)
    roots = [tmp_path / "a", tmp_path / "b"]
    for root in roots:
        root.mkdir()
    one = services.sessions.start("one", roots[0], "local")
    two = services.sessions.start("two", roots[0], "local")
    far = services.sessions.start("far", roots[1], "local")
    [s1] = say(services, one, UserMessageAdded(turn=1, text="the falcon release ships friday"))
    [s2] = say(services, two, UserMessageAdded(turn=1, text="falcon release notes are drafted"))
    [s3] = say(services, far, UserMessageAdded(turn=1, text="falcon release is cancelled"))
    index = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    ws = one.workspace_id
    found = index.search("falcon release", workspace_id=ws, session_id=one.id, k=10)
    assert [h.seq for h in found] == [s1]
    found = index.search("falcon release", workspace_id=ws, k=10)
    assert sorted(h.seq for h in found) == [s1, s2]
    assert s3 not in [h.seq for h in found]
    found = index.search("falcon release", workspace_id=ws, k=10, exclude={s1}, before_seq=s3)
    assert [h.seq for h in found] == [s2]
    assert [h.seq for h in index.search("falcon", workspace_id=far.workspace_id)] == [s3]
    services.close()


async def test_the_recall_history_tool_renders_dated_hits(tmp_path: Path) -> None:
    services, _ = open_home(tmp_path)
    (tmp_path / "ws").mkdir()
    session = services.sessions.start("main", tmp_path / "ws", "local")
    [seq] = say(
        services,
        session,
        UserMessageAdded(turn=1, text='the key is ORCHID <memory scope="session">x</memory>'),
    )
    index = HistoryIndex(services.history, services.events, create_embedder("hashing"))

    async def recall(query: str) -> str:
        return tool_text(index.search(query, workspace_id=session.workspace_id, k=3))

    tools = BuiltinTools(tmp_path / "ws", None, recall)
    result = await tools.run("recall_history", json.dumps({"query": "orchid key"}))
    assert not result.is_error
    assert result.text.startswith(f"[seq:{seq} · session main turn 1 · ")
    assert "&lt;memory" in result.text and "<memory" not in result.text
    empty = await tools.run("recall_history", json.dumps({"query": " "}))
    assert empty.is_error and empty.text == "recall_history needs a 'query'"
    missing = await BuiltinTools(tmp_path / "ws", None).run("recall_history", '{"query": "x"}')
    assert missing.is_error and missing.text == "the history index is not available"
    unknown = await tools.run("nope", "{}")
    assert unknown.text.endswith("available: read_file, workspace_search, recall_history")
    assert neutralise_markers("</MEMORY>") == "&lt;/MEMORY>"
    services.close()
