"""Every MCP tool through the official client: typed schemas, one-line errors, the approval model
(changes to user and workspace memories are proposals), and taint from untrusted results."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any, get_args

from mcp import Client
from mcp.client.stdio import stdio_client
from mcp_helpers import error_text, payload, stdio_params

from kairox.app import AppFacade
from kairox.core.events import UntrustedInput
from kairox.core.limits import MAX_MEMORY_BODY_CHARS
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.mcp.schemas import ScopeName, StatusFilter
from kairox.mcp.server import build_server
from kairox.memory.service import Proposal

TOOLS = {
    "memory_propose",
    "memory_search",
    "memory_list",
    "memory_get",
    "memory_update",
    "memory_delete",
    "memory_history",
    "memory_extract",
    "recall_history",
    "workspace_search",
    "context_preview",
}


def _schema(tools: Any, name: str) -> dict[str, Any]:
    return next(t.input_schema for t in tools if t.name == name)["properties"]


async def test_server_info_tools_and_schemas(workspace: Path, kairox_home: Path) -> None:
    with AppFacade.open(kairox_home) as facade:
        async with Client(build_server(facade, workspace=workspace)) as client:
            assert client.server_info is not None
            assert client.server_info.version == version("kairox")
            assert client.instructions is not None and "approve" in client.instructions
            tools = (await client.list_tools()).tools
    assert {t.name for t in tools} >= TOOLS
    propose = _schema(tools, "memory_propose")
    assert propose["scope"]["enum"] == ["session", "user", "workspace"]
    assert propose["body"]["maxLength"] == MAX_MEMORY_BODY_CHARS
    assert _schema(tools, "memory_list")["status"]["enum"] == [
        "pending", "accepted", "rejected", "deleted", "all",
    ]  # fmt: skip
    for name in ("memory_search", "workspace_search", "recall_history"):
        k = _schema(tools, name)["k"]
        assert (k["minimum"], k["maximum"]) == (1, 50)
    # The schema's enums are the core enums' values.
    assert set(get_args(ScopeName)) == {s.value for s in MemoryScope}
    assert set(get_args(StatusFilter)) == {s.value for s in MemoryStatus} | {"all"}


async def test_bad_input_is_a_one_line_tool_error_and_no_traceback(
    workspace: Path, kairox_home: Path, tmp_path: Path
) -> None:
    stderr = tmp_path / "server-stderr.txt"
    with stderr.open("w") as errlog:
        async with Client(stdio_client(stdio_params(kairox_home, workspace), errlog)) as client:
            listed = await client.call_tool("memory_list", {"status": "all"})
            assert not listed.is_error and payload(listed) == []
            bad_status = error_text(await client.call_tool("memory_list", {"status": "bogus"}))
            bad_scope = error_text(
                await client.call_tool(
                    "memory_propose", {"scope": "global", "key": "k", "body": "a fact"}
                )
            )
            bad_k = error_text(await client.call_tool("workspace_search", {"query": "x", "k": 0}))
            too_long = error_text(
                await client.call_tool(
                    "memory_propose",
                    {"scope": "user", "key": "k", "body": "x" * (MAX_MEMORY_BODY_CHARS + 1)},
                )
            )
            missing = error_text(await client.call_tool("memory_get", {}))
            unknown = error_text(await client.call_tool("memory_get", {"memory_id": "mem_nope"}))
    for text in (bad_status, bad_scope, bad_k, too_long, missing, unknown):
        assert "\n" not in text, text
    assert bad_status.startswith("memory_list: status must be one of")
    assert "'all'" in bad_status and "'bogus'" in bad_status
    assert bad_scope.startswith("memory_propose: scope must be one of")
    assert "'workspace'" in bad_scope and "'global'" in bad_scope
    assert bad_k.startswith("workspace_search: k:") and "1" in bad_k
    assert too_long.startswith("memory_propose: body:") and str(MAX_MEMORY_BODY_CHARS) in too_long
    assert missing == "memory_get: memory_id is required"
    assert unknown == "memory_get: no memory with id 'mem_nope'"
    assert "Traceback" not in stderr.read_text()


async def test_changes_and_deletes_of_user_memories_are_proposals_and_session_ones_apply(
    workspace: Path, kairox_home: Path
) -> None:
    with AppFacade.open(kairox_home) as facade:
        await facade.sessions.ensure("s1", workspace=workspace)
        routed = await facade.memory.propose(
            workspace=workspace, session=None, scope=MemoryScope.USER, key="editor", body="vim"
        )
        accepted = await facade.memory.approve(routed.record.id)
        server = build_server(facade, workspace=workspace, session="s1")
        async with Client(server) as client:
            update = payload(
                await client.call_tool("memory_update", {"memory_id": accepted.id, "body": "helix"})
            )
            assert update["status"] == "pending" and update["replaces_body"] == "vim"
            assert (await facade.memory.show(accepted.id)).body == "vim"  # nothing changed yet
            forget = payload(await client.call_tool("memory_delete", {"memory_id": accepted.id}))
            assert (forget["status"], forget["forget"], forget["body"]) == ("pending", True, "vim")
            again = payload(await client.call_tool("memory_delete", {"memory_id": accepted.id}))
            assert again["id"] == forget["id"] and again["duplicate"] is True
            assert (await facade.memory.show(accepted.id)).status is MemoryStatus.ACCEPTED
            session_memory = payload(
                await client.call_tool(
                    "memory_propose", {"scope": "session", "body": "porting the parser"}
                )
            )
            assert session_memory["status"] == "accepted"
            edited = payload(
                await client.call_tool(
                    "memory_update",
                    {"memory_id": session_memory["id"], "body": "porting the lexer"},
                )
            )
            assert edited["status"] == "accepted" and edited["body"] == "porting the lexer"
            deleted = payload(
                await client.call_tool("memory_delete", {"memory_id": session_memory["id"]})
            )
            assert deleted["status"] == "deleted"
            history = payload(
                await client.call_tool("memory_history", {"memory_id": session_memory["id"]})
            )
            assert [v["action"] for v in history] == ["propose", "accept", "edit", "delete"]
            got = payload(await client.call_tool("memory_get", {"memory_id": accepted.id}))
            assert got["body"] == "vim" and got["version"] == accepted.version
            await facade.memory.approve(update["id"])
            assert (await facade.memory.show(accepted.id)).body == "helix"
            await facade.memory.approve(forget["id"])  # the user decides the deletion
            gone = payload(await client.call_tool("memory_get", {"memory_id": accepted.id}))
            assert gone["status"] == "deleted"
            everything = payload(await client.call_tool("memory_list", {"status": "all"}))
            assert {m["status"] for m in everything} == {"deleted"}


async def test_a_memory_of_another_workspace_is_not_found(
    workspace: Path, kairox_home: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with AppFacade.open(kairox_home) as facade:
        theirs = await facade.memory.propose(
            workspace=other, session=None, scope=MemoryScope.WORKSPACE, key="db", body="pg 16"
        )
        async with Client(build_server(facade, workspace=workspace)) as client:
            for tool in ("memory_get", "memory_history", "memory_delete"):
                text = error_text(await client.call_tool(tool, {"memory_id": theirs.record.id}))
                assert text == f"{tool}: no memory with id '{theirs.record.id}'"
            text = error_text(
                await client.call_tool(
                    "memory_update", {"memory_id": theirs.record.id, "body": "pg 17"}
                )
            )
            assert "no memory with id" in text
        assert (await facade.memory.show(theirs.record.id)).body == "pg 16"


async def test_proposals_after_untrusted_results_carry_them_as_provenance(
    workspace: Path, kairox_home: Path
) -> None:
    (workspace / "notes.md").write_text("Remember: the deploy key is in vault path ops/deploy.\n")
    with AppFacade.open(kairox_home) as facade:
        await facade.retrieval.index(workspace)
        async with Client(build_server(facade, workspace=workspace)) as client:
            clean = payload(
                await client.call_tool(
                    "memory_propose", {"scope": "workspace", "key": "a", "body": "uses uv"}
                )
            )
            assert clean["untrusted_inputs"] == []
            hits = payload(await client.call_tool("workspace_search", {"query": "deploy key"}))
            assert hits and hits[0]["path"] == "notes.md"
            tainted = payload(
                await client.call_tool(
                    "memory_propose",
                    {"scope": "workspace", "key": "deploy", "body": "deploy key: ops/deploy"},
                )
            )
    assert tainted["status"] == "pending"
    assert [u["kind"] for u in tainted["untrusted_inputs"]] == ["workspace_chunk"]


async def test_a_session_proposal_after_untrusted_results_follows_the_turn_rule(
    workspace: Path, kairox_home: Path
) -> None:
    """The same approval call a turn's proposals go through decides (``[memory]`` policy)."""
    (workspace / "notes.md").write_text("The staging host is stg-3.\n")
    with AppFacade.open(kairox_home) as facade:
        await facade.retrieval.index(workspace)
        await facade.sessions.ensure("s1", workspace=workspace)
        async with Client(build_server(facade, workspace=workspace, session="s1")) as client:
            await client.call_tool("workspace_search", {"query": "staging host"})
            made = payload(
                await client.call_tool("memory_propose", {"scope": "session", "body": "stg-3"})
            )
        info = await facade.sessions.resolve("s1", workspace=workspace)
        untrusted = tuple(UntrustedInput.model_validate(u) for u in made["untrusted_inputs"])
        [turn_like] = facade.services.approval.route(
            [Proposal(MemoryScope.SESSION, None, "stg-3 (as a turn)", untrusted)],
            workspace_id=info.workspace_id,
            session_id=info.id,
            turn=None,
        )
    assert untrusted and untrusted[0].kind == "workspace_chunk"
    assert made["status"] == turn_like.record.status.value


async def test_recall_history_returns_earlier_turns_and_taints(
    workspace: Path, kairox_home: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "Noted."}) + "\n")
    with AppFacade.open(kairox_home, model=f"scripted:{script}") as facade:
        info = await facade.chat.open("main", workspace=workspace)
        await facade.chat.run(info.id, "the staging database listens on port 5433")
        async with Client(build_server(facade, workspace=workspace, session="main")) as client:
            turns = payload(
                await client.call_tool("recall_history", {"query": "staging database port"})
            )
            assert any("5433" in t["text"] for t in turns)
            proposal = payload(
                await client.call_tool(
                    "memory_propose", {"scope": "workspace", "key": "db.port", "body": "5433"}
                )
            )
            preview = payload(await client.call_tool("context_preview", {}))
        await facade.aclose()
    assert {u["kind"] for u in proposal["untrusted_inputs"]} == {"recalled_event"}
    assert proposal["status"] == "pending"
    assert preview["session"] == "main"
    sources = {s["source"] for s in preview["sources"]}
    assert {"system", "history"} <= sources
    assert 0 < preview["used"] <= preview["budget"]


async def test_memory_search_finds_a_paraphrase(workspace: Path, kairox_home: Path) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text(
        '[retrieval]\nembedder = "sentence-transformers:all-MiniLM-L6-v2"\n'
    )
    with AppFacade.open(kairox_home) as facade:
        for key, body in (
            ("style.commits", "Commit messages follow Conventional Commits"),
            ("db.engine", "This project uses PostgreSQL 17"),
        ):
            routed = await facade.memory.propose(
                workspace=workspace, session=None, scope=MemoryScope.WORKSPACE, key=key, body=body
            )
            await facade.memory.approve(routed.record.id)
        async with Client(build_server(facade, workspace=workspace)) as client:
            found = payload(
                await client.call_tool("memory_search", {"query": "which database do we use"})
            )
    assert found and found[0]["key"] == "db.engine"


async def test_memory_search_finds_a_chinese_memory_by_a_chinese_question(
    workspace: Path, kairox_home: Path
) -> None:
    """With the default (lexical) embedder: Chinese is split into bigrams, so the question
    shares 我们/数据/据库 with the memory (a whole clause was one word)."""
    with AppFacade.open(kairox_home) as facade:
        for key, body in (
            ("项目.数据库", "我们的项目使用 PostgreSQL 17 数据库"),
            ("饮料", "用户喜欢喝绿茶，不喝咖啡"),
            ("style.commits", "Commit messages follow Conventional Commits"),
        ):
            routed = await facade.memory.propose(
                workspace=workspace, session=None, scope=MemoryScope.WORKSPACE, key=key, body=body
            )
            await facade.memory.approve(routed.record.id)
        async with Client(build_server(facade, workspace=workspace)) as client:
            found = payload(await client.call_tool("memory_search", {"query": "我们用什么数据库"}))
    assert found and found[0]["key"] == "项目.数据库"


async def test_memory_extract_proposes_from_a_conversation_with_the_clients_taint(
    workspace: Path, kairox_home: Path, tmp_path: Path
) -> None:
    (workspace / "notes.md").write_text("The deploy key lives in vault path ops/deploy.\n")
    script = tmp_path / "extract.jsonl"
    markers = '<memory scope="workspace" key="deploy.key">The deploy key is in ops/deploy</memory>'
    script.write_text(json.dumps({"purpose": "extraction", "text": markers}) + "\n")
    conversation = [
        {"role": "user", "content": "Where is the deploy key?"},
        {"role": "assistant", "content": "In the vault, under ops/deploy."},
    ]
    with AppFacade.open(kairox_home, model=f"scripted:{script}") as facade:
        await facade.retrieval.index(workspace)
        async with Client(build_server(facade, workspace=workspace)) as client:
            await client.call_tool("workspace_search", {"query": "deploy key"})
            extracted = payload(
                await client.call_tool("memory_extract", {"messages": conversation})
            )
            empty = error_text(await client.call_tool("memory_extract", {"messages": []}))
        await facade.aclose()
    [proposal] = extracted
    assert (proposal["key"], proposal["status"]) == ("deploy.key", "pending")
    assert [u["kind"] for u in proposal["untrusted_inputs"]] == ["workspace_chunk"]
    assert empty.startswith("memory_extract: messages:") and "\n" not in empty
