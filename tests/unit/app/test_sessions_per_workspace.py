"""Issue 13 at the facade: every workspace has its own ``main``, names are resolved in a
workspace, ids are found from anywhere, and two same-named sessions run on separate actors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kairox.app import AppFacade
from kairox.core.errors import InvalidInput, NotFound
from kairox.core.events import UserMessageAdded


@pytest.fixture
async def facade(kairox_home: Path, tmp_path: Path) -> AsyncIterator[AppFacade]:
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps({"text": f"reply {i}"}) + "\n" for i in range(4)))
    f = AppFacade.open(kairox_home, model=f"scripted:{script}")
    try:
        yield f
    finally:
        await f.aclose()
        f.close()


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    return a, b


async def _said(facade: AppFacade, session: str) -> list[str]:
    events = await facade.events.list(session=session)
    return [e.payload.text for e in events if isinstance(e.payload, UserMessageAdded)]


async def test_each_workspace_runs_its_own_main(facade: AppFacade, two: tuple[Path, Path]) -> None:
    a, b = two
    assert await facade.sessions.default_name(b) == "main"
    in_a = await facade.chat.open("main", workspace=a)
    in_b = await facade.chat.open("main", workspace=b)
    assert in_a.id != in_b.id and in_a.name == in_b.name == "main"
    assert (await facade.chat.run(in_a.id, "to a")).failure is None
    assert (await facade.chat.run(in_b.id, "to b")).failure is None
    assert await _said(facade, in_a.id) == ["to a"]
    assert await _said(facade, in_b.id) == ["to b"]
    assert (await facade.sessions.resolve("main", workspace=b)).id == in_b.id
    assert (await facade.sessions.get("main", workspace=a)).id == in_a.id
    with pytest.raises(NotFound):  # an id is scoped to its workspace like a name (issue 33)
        await facade.sessions.resolve(in_a.id, workspace=b)
    events = await facade.events.list(session="main", workspace=b)
    assert {e.session_id for e in events} == {in_b.id}
    with pytest.raises(InvalidInput, match="2 workspaces"):
        await facade.sessions.get("main")  # a bare name never picks one of them
    archived = await facade.sessions.archive("main", workspace=b)
    assert archived.id == in_b.id and not (await facade.sessions.get(in_a.id)).archived


async def test_a_name_only_elsewhere_is_not_found_like_a_name_nobody_has(
    facade: AppFacade, two: tuple[Path, Path]
) -> None:
    a, b = two
    ops = await facade.chat.open("ops", workspace=a)
    for call in (
        facade.sessions.resolve("ops", workspace=b),
        facade.sessions.archive("ops", workspace=b),
    ):
        with pytest.raises(NotFound) as refused:
            await call
        assert str(refused.value) == "no session with name 'ops'"
    # Opening or sending to it starts b's own session of that name.
    own = await facade.chat.open("ops", workspace=b)
    assert own.id != ops.id and own.workspace_path == str(b.resolve())
    assert (await facade.sessions.ensure("ops", workspace=b)).id == own.id
    with pytest.raises(NotFound, match="no session with name 'nope'"):
        await facade.sessions.resolve("nope", workspace=b)
    # main is every workspace's default: it starts here instead of pointing elsewhere.
    await facade.chat.open("main", workspace=a)
    fresh = await facade.sessions.ensure("main", workspace=b)
    assert fresh.workspace_path == str(b.resolve())
