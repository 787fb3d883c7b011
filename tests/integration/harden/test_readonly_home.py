"""A read-only home (a read-only mount) opens read-only: reads work, writes fail in one line.

The home is bind-mounted read-only inside a private mount namespace (``unshare -m``), so the
mount exists only for the command under test.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from harden_fakes import Kx


def readonly_kx(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "kairox", *args))
    script = (
        f"mount --bind {shlex.quote(str(home))} {shlex.quote(str(home))} && "
        f"mount -o remount,ro,bind {shlex.quote(str(home))} && exec {command}"
    )
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120
    )


def test_read_commands_work_on_a_read_only_home(
    workspace: Path, kairox_home: Path, kx: Kx, script: Callable[..., str]
) -> None:
    model = script({"text": 'Ok <memory scope="user" key="tz">UTC</memory>'})
    sent = kx("send", "--workspace", str(workspace), "--model", model, "--json", "hi")
    assert sent.returncode == 0, sent.stderr
    [proposal] = json.loads(sent.stdout)["proposals"]
    probe = readonly_kx(kairox_home, "--version")
    assert probe.returncode == 0, probe.stderr  # the namespace and mount work here

    listed = readonly_kx(kairox_home, "memory", "list", "--workspace", str(workspace), "--json")
    assert listed.returncode == 0, listed.stderr
    assert [m["id"] for m in json.loads(listed.stdout)] == [proposal["id"]]
    for args in (("sessions",), ("events", "--json"), ("memory", "show", proposal["id"])):
        result = readonly_kx(kairox_home, *args)
        assert result.returncode == 0, (args, result.stderr)

    refused = readonly_kx(kairox_home, "memory", "approve", proposal["id"])
    assert refused.returncode == 1
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("error:") and "read-only" in line
