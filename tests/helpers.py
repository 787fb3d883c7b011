"""What many tests share: the ``kx`` CLI runner, scripted-model files and workspace configs.

``tests/`` is on ``sys.path`` (pytest puts each conftest's folder there), so a test imports
these as ``from helpers import kx, scripted, write_config``. The ``script`` fixture of
``tests/conftest.py`` is ``scripted`` bound to the test's ``tmp_path``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

KAIROX = (sys.executable, "-m", "kairox")


def kx(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    unset: tuple[str, ...] = (),
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``kairox`` CLI in a subprocess, with the test's environment (its own home)
    plus ``env``, less the variables named in ``unset``."""
    environment = {**os.environ, **(env or {})}
    for name in unset:
        environment.pop(name, None)
    return subprocess.run(
        [*KAIROX, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=environment,
    )


def invoke(*args: str) -> tuple[int, str]:
    """Run the ``kairox`` command group in this process (click's runner): exit code, output."""
    from click.testing import CliRunner

    from kairox.cli import commands  # noqa: F401  (registers every command)
    from kairox.cli.main import cli

    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def write_script(folder: Path, *lines: Mapping[str, object] | str) -> Path:
    """A scripted-model JSON Lines file under a new name in ``folder``: a string is a reply's
    text, a mapping the whole line (``{"text": ..., "purpose": "summary"}``, ``{"error": ...}``).
    Keep ``folder`` outside a workspace that gets indexed."""
    from kairox.testing.scripted_model import write_script as write

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"script{len(list(folder.glob('script*.jsonl'))) + 1}.jsonl"
    return write(path, [{"text": line} if isinstance(line, str) else line for line in lines])


def scripted(folder: Path, *lines: Mapping[str, object] | str) -> str:
    """``write_script``'s file as a model spec: ``scripted:<path>``."""
    return f"scripted:{write_script(folder, *lines)}"


def write_config(workspace: Path, text: str, *, trusted: bool = False) -> Path:
    """``text`` as the workspace's ``.kairox/config.toml``; returns its path. ``trusted``: the
    user's own project config (``kairox trust``); untrusted, it may only tighten the policy."""
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if trusted:
        from kairox.core.paths import resolve_home
        from kairox.core.trust import TrustStore

        TrustStore(resolve_home()).trust(workspace)
    return path


def use_scripted_model(workspace: Path, *lines: Mapping[str, object] | str) -> str:
    """Make the workspace's ``local`` profile a scripted model replying ``lines`` (its file
    beside the workspace), with the workspace index off; returns the model spec."""
    model = scripted(workspace.parent, *lines)
    write_config(
        workspace,
        f'[profiles.local]\nmodel = "{model}"\n[retrieval]\nworkspace_index = false\n',
    )
    return model


def accept_workspace_memory(home: Path, workspace: Path, key: str, body: str) -> str:
    """A workspace memory the user accepted, written straight into ``home``'s store; its id."""
    from kairox.core.ids import workspace_id_for
    from kairox.core.types import Actor, MemoryScope
    from kairox.services import Services

    services = Services.open(home)
    try:
        record = services.memories.propose(
            MemoryScope.WORKSPACE,
            key,
            body,
            workspace_id=workspace_id_for(workspace),
            session_id=None,
        )
        return services.memories.accept(record.id, actor=Actor.USER).id
    finally:
        services.close()
