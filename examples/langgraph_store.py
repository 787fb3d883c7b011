"""LangGraph (and LangMem's memory tools) on Kairox memories.

("user",), ("workspace",) and ("session", NAME) are Kairox scopes; any other namespace is kept
as a path inside the user's scope (``scope="workspace"`` to keep it in the workspace). With
``approval="required"`` a put is a proposal the user approves before the graph sees it. Search
ranks by meaning with the workspace's embedder; for paraphrases, set a real one in
``.kairox/config.toml``: ``[retrieval] embedder = "sentence-transformers:all-MiniLM-L6-v2"``.

    pip install "kairox[langgraph,embeddings]" langmem
    python examples/langgraph_store.py
"""

import json
import tempfile
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langmem import create_manage_memory_tool, create_search_memory_tool

from kairox.integrations.langgraph import KairoxStore

# A throwaway home, so trying the example leaves your own memories alone; drop `home=` to use
# the CLI's home.
scratch = tempfile.TemporaryDirectory(prefix="kairox-example-")
home = scratch.name
store = KairoxStore(home=home)
manage = create_manage_memory_tool(namespace=("workspace",))
search = create_search_memory_tool(namespace=("workspace",))


class State(TypedDict):
    note: str
    question: str
    found: list[str]


def remember(state: State) -> dict[str, list[str]]:
    manage.invoke({"content": state["note"], "action": "create"})
    return {}


def recall(state: State) -> dict[str, list[str]]:
    hits = json.loads(search.invoke({"query": state["question"]}))
    return {"found": [hit["value"]["content"] for hit in hits]}


builder = StateGraph(State)
builder.add_node("remember", remember)
builder.add_node("recall", recall)
builder.add_edge(START, "remember")
builder.add_edge("remember", "recall")
builder.add_edge("recall", END)
graph = builder.compile(store=store)

try:
    result = graph.invoke(
        {
            "note": "This project uses PostgreSQL 17",
            "question": "which database do we use",
            "found": [],
        }
    )
    print("found:", result["found"])
    store.put(("user",), "editor", {"content": "The user edits with Helix"})
    item = store.get(("user",), "editor")
    print("user memory:", item.value if item else None)
    print("namespaces:", store.list_namespaces())
finally:
    store.close()
    scratch.cleanup()
