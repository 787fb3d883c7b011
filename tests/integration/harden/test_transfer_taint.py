"""Export then import keeps the untrusted mark of a pending memory (issue 33, Low), in JSON and
in Markdown, into either store."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairox.app import AppFacade
from kairox.core.events import UntrustedInput
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.services import Services

TAINT = (UntrustedInput(kind="tool_result", ref="seq:7"),)


@pytest.mark.parametrize("fmt", ["json", "markdown"])
async def test_a_pending_memorys_taint_survives_export_and_import(
    fmt: str, tmp_path: Path, workspace: Path, store_url: str | None
) -> None:
    source = AppFacade(Services.open(tmp_path / "home1"))
    try:
        tainted = await source.memory.propose(
            workspace=workspace,
            session=None,
            scope=MemoryScope.USER,
            key="user.login",
            body="The user's login password is hunter2",
            untrusted=TAINT,
        )
        assert tainted.record.untrusted_inputs == TAINT
        await source.memory.propose(
            workspace=workspace, session=None, scope=MemoryScope.USER, key="user.tea", body="Tea"
        )
        text = await source.memory.export(workspace=workspace, fmt=fmt)  # type: ignore[arg-type]
    finally:
        await source.aclose()
        source.close()
    target = AppFacade(Services.open(tmp_path / "home2", store_url=store_url))
    try:
        report = await target.memory.import_(text.encode(), workspace=workspace, fmt=fmt)  # type: ignore[arg-type]
        assert len(report.pending) == 2
        pending = {
            m.key: m
            for m in await target.memory.list(workspace=workspace, statuses=[MemoryStatus.PENDING])
        }
        assert pending["user.login"].untrusted_inputs == TAINT
        assert pending["user.tea"].untrusted_inputs == ()
    finally:
        await target.aclose()
        target.close()
