"""The workspace index catches up with the files before each turn, and the trace says so."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from kairox.app import AppFacade, TurnDone
from kairox.core.events import ContextAssembled
from kairox.core.types import ContextSource

Script = Callable[..., str]


@pytest.fixture
async def facade(script: Script) -> AsyncIterator[AppFacade]:
    app = AppFacade.open(model=script(*({"text": "ok"} for _ in range(5))))
    try:
        yield app
    finally:
        await app.aclose()
        app.close()


async def turn(facade: AppFacade, workspace: Path, text: str) -> ContextAssembled:
    await facade.chat.open("main", workspace=workspace)
    async for update in facade.chat.send("main", text):
        if isinstance(update, TurnDone):
            assert update.outcome.failure is None, update.outcome.failure
    trace = await facade.context.trace("main")
    assert trace is not None
    return trace


def workspace_refs(trace: ContextAssembled) -> list[str]:
    return [i.ref for i in trace.items if i.source is ContextSource.WORKSPACE and i.included]


async def test_a_new_user_gets_workspace_hits_without_kairox_index(
    facade: AppFacade, workspace: Path
) -> None:
    empty = await turn(facade, workspace, "hello")
    assert any("workspace index is empty" in n for n in empty.retrieval_notes)

    (workspace / "deploy.md").write_text("Deploys run from the zanzibar pipeline on Tuesdays.\n")
    first = await turn(facade, workspace, "Which pipeline runs zanzibar deploys?")
    assert any("deploy.md" in ref for ref in workspace_refs(first))
    assert any("refreshed: 1 files indexed" in n for n in first.retrieval_notes)

    unchanged = await turn(facade, workspace, "Which pipeline runs zanzibar deploys?")
    assert unchanged.retrieval_notes == ()  # nothing changed: nothing to say

    (workspace / "deploy.md").unlink()
    (workspace / "release.md").write_text("Releases are cut by the quokka bot.\n")
    changed = await turn(facade, workspace, "Who cuts quokka releases?")
    assert any("1 files indexed, 1 removed" in n for n in changed.retrieval_notes)
    refs = workspace_refs(changed)
    assert any("release.md" in r for r in refs) and not any("deploy.md" in r for r in refs)


async def test_a_chinese_turn_gets_hits_from_chinese_files(
    facade: AppFacade, workspace: Path
) -> None:
    (workspace / "部署.md").write_text("部署流程：先运行全部测试，再把镜像推送到生产服务器。\n")
    (workspace / "备份.md").write_text("本项目使用PostgreSQL数据库，每天晚上自动备份。\n")
    (workspace / "lunch.md").write_text("The cafeteria serves lunch at noon.\n")
    trace = await turn(facade, workspace, "数据库多久备份一次？")
    refs = workspace_refs(trace)
    assert refs and "备份.md" in refs[0]
    assert not any("lunch.md" in r for r in refs)
    (workspace / "夜間.md").write_text("データベースのバックアップは毎晩三時に実行されます。\n")
    japanese = await turn(facade, workspace, "バックアップは何時に実行されますか")
    assert any("夜間.md" in r for r in workspace_refs(japanese))
