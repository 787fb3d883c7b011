"""No session id or memory id crosses workspaces (issue 33, Medium): every lookup by id or name
is scoped to the caller's workspace, with the same "not found" for what exists elsewhere, and
no error names another workspace's path or ids. On both stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from kairox.app import AppFacade
from kairox.core.errors import InvalidInput, NotFound
from kairox.core.types import MemoryScope
from kairox.integrations.openai_agents import KairoxSession
from kairox.mcp.server import build_server
from kairox.services import Services

SECRET = "the launch code of B is 0000"


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "wsA", tmp_path / "wsB"
    a.mkdir()
    b.mkdir()
    return a, b


def _facade(home: Path, store_url: str | None, tmp_path: Path) -> AppFacade:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "Noted."}) + "\n")
    return AppFacade(Services.open(home, store_url=store_url), model=f"scripted:{script}")


def _text(result: Any) -> str:
    return str(result.contents[0].text)


async def test_a_session_of_another_workspace_is_not_found_by_id_or_name(
    kairox_home: Path, tmp_path: Path, two: tuple[Path, Path], store_url: str | None
) -> None:
    a, b = two
    facade = _facade(kairox_home, store_url, tmp_path)
    try:
        secret_b = await facade.chat.open("secretB", workspace=b)
        await facade.chat.run(secret_b.id, SECRET)
        await facade.chat.open("main", workspace=a)
        nobody = NotFound("session", "nope", by="name")
        for name in (secret_b.id, "secretB"):
            with pytest.raises(NotFound) as err:
                await facade.sessions.resolve(name, workspace=a)
            assert str(err.value) == str(nobody).replace("nope", name)
            assert str(b) not in str(err.value)
        # An id is never a new name: B's id is not found for ``send`` or ``chat.open`` either;
        # B's name starts A's own session of that name.
        for call in (
            facade.sessions.ensure(secret_b.id, workspace=a),
            facade.chat.open(secret_b.id, workspace=a),
        ):
            with pytest.raises(NotFound) as err:
                await call
            assert str(err.value) == f"no session with name '{secret_b.id}'"
        opened = await facade.chat.open("secretB", workspace=a)
        assert opened.id != secret_b.id and opened.workspace_path == str(a.resolve())
        assert await facade.chat.history(opened.id) == []

        async with Client(build_server(facade, workspace=a)) as client:
            for name in (secret_b.id, "secretB-other"):
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(f"kairox://sessions/{name}/context")
                assert SECRET not in str(refused.value) and str(b) not in str(refused.value)
    finally:
        await facade.aclose()
        facade.close()


def test_kairox_session_with_another_workspaces_id_neither_reads_nor_writes_it(
    kairox_home: Path, tmp_path: Path, two: tuple[Path, Path]
) -> None:
    a, b = two
    facade = _facade(kairox_home, None, tmp_path)

    async def setup() -> str:
        info = await facade.chat.open("secretB", workspace=b)
        await facade.chat.run(info.id, SECRET)
        return info.id

    import asyncio

    b_id = asyncio.run(setup())
    asyncio.run(facade.aclose())
    facade.close()
    session = KairoxSession(b_id, workspace=a, home=kairox_home)
    try:
        with pytest.raises(NotFound):
            asyncio.run(session.get_items())
        with pytest.raises(NotFound):
            asyncio.run(session.add_items([{"role": "user", "content": "written from A"}]))
    finally:
        session.close()
    services = Services.open(kairox_home)
    try:
        texts = [
            json.dumps(e.payload.model_dump(mode="json"))
            for e in services.events.read(session_id=b_id)
        ]
        assert not any("written from A" in t for t in texts)
    finally:
        services.close()


async def test_memory_ids_and_prefixes_are_scoped_to_the_workspace(
    kairox_home: Path, tmp_path: Path, two: tuple[Path, Path], store_url: str | None
) -> None:
    a, b = two
    facade = _facade(kairox_home, store_url, tmp_path)
    try:
        mine = await facade.memory.propose(
            workspace=a, session=None, scope=MemoryScope.WORKSPACE, key="a.k", body="A's"
        )
        theirs = [
            await facade.memory.propose(
                workspace=b, session=None, scope=MemoryScope.WORKSPACE, key=f"b.k{i}", body="B"
            )
            for i in range(12)
        ]
        for other in theirs:
            with pytest.raises(NotFound):
                await facade.memory.show(other.record.id, workspace=a)
        # "mem_" matches every memory: in A it is ambiguous only among A's (here: one), so it
        # names A's memory, and B's ids are never listed.
        shown = await facade.memory.show("mem_", workspace=a)
        assert shown.id == mine.record.id
        await facade.memory.propose(
            workspace=a, session=None, scope=MemoryScope.WORKSPACE, key="a.j", body="A2"
        )
        with pytest.raises(InvalidInput) as ambiguous:
            await facade.memory.show("mem_", workspace=a)
        assert not any(t.record.id in str(ambiguous.value) for t in theirs)
    finally:
        await facade.aclose()
        facade.close()


async def test_a_user_memory_does_not_name_another_workspaces_session(
    kairox_home: Path, tmp_path: Path, two: tuple[Path, Path], store_url: str | None
) -> None:
    a, b = two
    facade = _facade(kairox_home, store_url, tmp_path)
    try:
        secret_b = await facade.chat.open("secretB", workspace=b)
        routed = await facade.memory.propose(
            workspace=b, session="secretB", scope=MemoryScope.USER, key="user.tz", body="CET"
        )
        assert routed.record.proposed_session_id == secret_b.id  # B itself sees its session
        [seen] = await facade.memory.list(workspace=a, scopes=[MemoryScope.USER])
        assert seen.id == routed.record.id and seen.proposed_session_id is None
        shown = await facade.memory.show(routed.record.id, workspace=a)
        assert shown.proposed_session_id is None
        [hit] = await facade.memory.search("CET", workspace=a)
        assert hit.record.proposed_session_id is None
        [in_b] = await facade.memory.list(workspace=b, scopes=[MemoryScope.USER])
        assert in_b.proposed_session_id == secret_b.id
    finally:
        await facade.aclose()
        facade.close()
