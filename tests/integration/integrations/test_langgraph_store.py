"""``KairoxStore`` (issue 24): LangGraph's ``BaseStore`` over Kairox memories, on both stores.

The cases follow LangGraph's own store tests (put/get/update/delete, invalid namespaces, filters
and pages, namespace listing
with prefix, suffix, wildcards and depth, the async API), then LangMem's memory tools and a
compiled LangGraph graph use it as their store.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError
from langmem import create_manage_memory_tool, create_search_memory_tool

from kairox import AppFacade, InvalidInput, MemoryStatus
from kairox.integrations.langgraph import KairoxStore

MINILM = "sentence-transformers:all-MiniLM-L6-v2"


def cli_json(workspace: Path, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "kairox", *args, "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=workspace,
        env=os.environ.copy(),
    )
    return json.loads(done.stdout)


def test_put_get_update_delete(store: KairoxStore, workspace: Path) -> None:
    assert isinstance(store, BaseStore)
    store.put(("user",), "diet", {"content": "The user is vegetarian"})
    item = store.get(("user",), "diet")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (
        ("user",),
        "diet",
        {"content": "The user is vegetarian"},
    )
    store.put(("user",), "diet", {"content": "The user is vegan"})
    updated = store.get(("user",), "diet")
    assert updated is not None and updated.value == {"content": "The user is vegan"}
    assert updated.created_at == item.created_at and updated.updated_at >= item.updated_at
    store.put(("workspace",), "ci", {"tool": "github-actions", "required": True})
    ci = store.get(("workspace",), "ci")
    assert ci is not None and ci.value == {"tool": "github-actions", "required": True}
    store.put(("session", "planning"), "deadline", {"content": "Ship on the 9th"})
    assert store.get(("session", "planning"), "deadline") is not None
    assert store.get(("session", "other"), "deadline") is None
    # the user's CLI sees the same memory, accepted, as the user's own write
    listed = cli_json(workspace, "memory", "list")
    assert {(m["key"], m["body"], m["status"]) for m in listed} >= {
        ("diet", "The user is vegan", "accepted")
    }
    store.delete(("user",), "diet")
    assert store.get(("user",), "diet") is None
    store.delete(("user",), "never-there")  # deleting nothing is a no-op, as in LangGraph


@pytest.mark.parametrize("namespace", [(), ("session", ""), ("notes", "a.b")])
def test_a_namespace_langgraph_refuses_is_refused(
    store: KairoxStore, namespace: tuple[str, ...]
) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"content": "x"})
    with pytest.raises(InvalidNamespaceError):
        asyncio.run(store.aput(namespace, "k", {"content": "x"}))


def test_search_with_filters_and_pages(store: KairoxStore) -> None:
    for i in range(5):
        store.put(("workspace",), f"doc{i}", {"kind": "note" if i % 2 else "rule", "n": i})
    store.put(("user",), "tz", {"content": "The user is in UTC+1"})
    store.put(("session", "s1"), "todo", {"content": "Review the PR"})
    everything = store.search(())
    assert {(i.namespace, i.key) for i in everything} == {
        *((("workspace",), f"doc{i}") for i in range(5)),
        (("user",), "tz"),
        (("session", "s1"), "todo"),
    }
    notes = store.search(("workspace",), filter={"kind": "note"})
    assert sorted(i.value["n"] for i in notes) == [1, 3]
    first = store.search(("workspace",), limit=2)
    rest = store.search(("workspace",), limit=10, offset=2)
    assert len(first) == 2 and len(rest) == 3
    assert {i.key for i in first}.isdisjoint({i.key for i in rest})
    assert [i.key for i in store.search(("session",))] == ["todo"]
    assert [i.key for i in store.search(("session", "s1"))] == ["todo"]


def meaning(workspace: Path) -> None:
    """Search by meaning with a real embedder (it ships in the embeddings extra, offline)."""
    (workspace / ".kairox").mkdir(exist_ok=True)
    (workspace / ".kairox" / "config.toml").write_text(f'[retrieval]\nembedder = "{MINILM}"\n')


def test_search_ranks_by_meaning(backend: str | None, workspace: Path) -> None:
    meaning(workspace)
    store = KairoxStore(workspace=workspace)
    try:
        check_meaning(store)
    finally:
        store.close()


def check_meaning(store: KairoxStore) -> None:
    store.put(("workspace",), "db.engine", {"content": "This project uses PostgreSQL 17"})
    store.put(("workspace",), "deploys", {"content": "Deploys run on Fridays"})
    store.put(("user",), "style", {"content": "The user prefers short answers"})
    hits = store.search(("workspace",), query="which database do we use")
    assert hits and hits[0].key == "db.engine"
    assert hits[0].score is not None and 0 < hits[0].score <= 1
    assert all(h.namespace == ("workspace",) for h in hits)
    everywhere = store.search((), query="short answers")
    assert everywhere[0].namespace == ("user",) and everywhere[0].key == "style"


def test_list_namespaces(store: KairoxStore) -> None:
    assert store.list_namespaces() == []
    store.put(("user",), "a", {"content": "a"})
    store.put(("workspace",), "b", {"content": "b"})
    store.put(("session", "alpha"), "c", {"content": "c"})
    store.put(("session", "beta"), "d", {"content": "d"})
    assert store.list_namespaces() == [
        ("session", "alpha"),
        ("session", "beta"),
        ("user",),
        ("workspace",),
    ]
    assert store.list_namespaces(prefix=("session",)) == [("session", "alpha"), ("session", "beta")]
    assert store.list_namespaces(suffix=("beta",)) == [("session", "beta")]
    assert store.list_namespaces(prefix=("*", "alpha")) == [("session", "alpha")]
    assert store.list_namespaces(max_depth=1) == [("session",), ("user",), ("workspace",)]
    assert store.list_namespaces(limit=1, offset=1) == [("session", "beta")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []


async def test_the_async_api(store: KairoxStore) -> None:
    await store.aput(("user",), "lang", {"content": "Prefers Python"})
    await store.aput(("user",), "editor", {"content": "Uses Helix"})
    lang, editor, missing = await asyncio.gather(
        store.aget(("user",), "lang"),
        store.aget(("user",), "editor"),
        store.aget(("user",), "nope"),
    )
    assert lang is not None and lang.value == {"content": "Prefers Python"}
    assert editor is not None and missing is None
    assert {i.key for i in await store.asearch(("user",))} == {"lang", "editor"}
    await store.adelete(("user",), "lang")
    assert await store.aget(("user",), "lang") is None
    assert await store.alist_namespaces() == [("user",)]


def test_approval_required_makes_proposals(backend: str | None, workspace: Path) -> None:
    kx = KairoxStore(workspace=workspace, approval="required")
    try:
        kx.put(("user",), "pet", {"content": "The user has a cat named Miso"})
        assert kx.get(("user",), "pet") is None  # waits for the user
        assert kx.search(("user",)) == []
        pending = cli_json(workspace, "memory", "list", "--status", "pending")
        assert [(m["key"], m["status"]) for m in pending] == [("pet", "pending")]
        cli_json(workspace, "memory", "approve", pending[0]["id"])
        approved = kx.get(("user",), "pet")
        assert approved is not None and approved.value == {
            "content": "The user has a cat named Miso"
        }
        with pytest.raises(InvalidInput, match="the user's decision"):
            kx.delete(("user",), "pet")
        assert kx.get(("user",), "pet") is not None  # nothing lost
    finally:
        kx.close()
    with pytest.raises(InvalidInput, match="approval must be"):
        KairoxStore(workspace=workspace, approval="maybe")  # type: ignore[arg-type]


def test_langmem_tools_work_against_it(store: KairoxStore, workspace: Path) -> None:
    manage = create_manage_memory_tool(namespace=("user",), store=store)
    search = create_search_memory_tool(namespace=("user",), store=store)
    created = manage.invoke({"content": "The user runs marathons", "action": "create"})
    memory_id = created.split()[-1]
    item = store.get(("user",), memory_id)
    assert item is not None and item.value == {"content": "The user runs marathons"}
    manage.invoke({"content": "The user runs ultramarathons", "action": "update", "id": memory_id})
    found = json.loads(search.invoke({"query": "ultramarathons"}))
    assert [(f["key"], f["value"]["content"]) for f in found] == [
        (memory_id, "The user runs ultramarathons")
    ]
    manage.invoke({"action": "delete", "id": memory_id})
    assert store.get(("user",), memory_id) is None


def test_a_compiled_graph_uses_it_as_its_store(store: KairoxStore, workspace: Path) -> None:
    """LangMem's tools find the store through LangGraph's runtime, as inside an agent."""
    manage = create_manage_memory_tool(namespace=("workspace",))
    search = create_search_memory_tool(namespace=("workspace",))

    class State(TypedDict):
        note: str
        found: list[str]

    def remember(state: State) -> dict[str, Any]:
        manage.invoke({"content": state["note"], "action": "create"})
        return {}

    def recall(state: State) -> dict[str, Any]:
        hits = json.loads(search.invoke({"query": "deploy"}))
        return {"found": [h["value"]["content"] for h in hits]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=store)
    result = graph.invoke({"note": "We deploy with blue-green releases", "found": []})
    assert result["found"] == ["We deploy with blue-green releases"]
    facade = AppFacade.open()
    try:
        records = asyncio.run(facade.memory.list(workspace=workspace))
    finally:
        facade.close()
    assert [(r.body, r.status) for r in records] == [
        ("We deploy with blue-green releases", MemoryStatus.ACCEPTED)
    ]


def test_the_example_runs(backend: str | None, workspace: Path, kairox_home: Path) -> None:
    meaning(workspace)
    example = Path(__file__).resolve().parents[3] / "examples" / "langgraph_store.py"
    done = subprocess.run(
        [sys.executable, str(example)],
        capture_output=True,
        text=True,
        check=True,
        cwd=workspace,
        env=os.environ.copy(),
        timeout=300,
    )
    assert done.stdout.splitlines() == [
        "found: ['This project uses PostgreSQL 17']",
        "user memory: {'content': 'The user edits with Helix'}",
        "namespaces: [('user',), ('workspace',)]",
    ]
    assert not kairox_home.exists()  # it wrote into a temporary home, not the user's
