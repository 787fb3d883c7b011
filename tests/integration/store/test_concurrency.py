"""Real processes against one store (SQLite home, and Postgres): a decision race, and a writer
killed mid-burst. The child processes find Postgres through ``$KAIROX_STORE_URL``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from kairox.core.types import MemoryScope
from kairox.services import Services

RACER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from kairox.services import Services
    from kairox.core.errors import MemoryDecisionError
    from kairox.core.types import Actor

    home, action, ids_file, go_file = sys.argv[1:5]
    ids = json.loads(Path(ids_file).read_text())
    services = Services.open(home)
    while not Path(go_file).exists():
        time.sleep(0.001)
    outcome = {"won": 0, "lost": 0, "errors": []}
    for memory_id in ids:
        try:
            if action == "approve":
                services.memories.accept(memory_id, actor=Actor.USER)
            else:
                services.memories.reject(memory_id, actor=Actor.USER)
            outcome["won"] += 1
        except MemoryDecisionError:
            outcome["lost"] += 1
        except Exception as exc:  # anything else is a failure the test reports
            outcome["errors"].append(f"{type(exc).__name__}: {exc}")
    print(json.dumps(outcome))
    """
)


def _env(store_url: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if store_url is not None:
        env["KAIROX_STORE_URL"] = store_url
    return env


def test_two_processes_race_to_decide(
    tmp_path: Path, kairox_home: Path, store_url: str | None
) -> None:
    services = Services.open(kairox_home, store_url=store_url)
    ids = [
        services.memories.propose(
            MemoryScope.WORKSPACE,
            f"k{i}",
            f"body {i}",
            workspace_id="ws_race",
            session_id="ses_race",
            turn=1,
        ).id
        for i in range(200)
    ]
    ids_file = tmp_path / "ids.json"
    ids_file.write_text(json.dumps(ids))
    go = tmp_path / "go"
    script = tmp_path / "racer.py"
    script.write_text(RACER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(kairox_home), action, str(ids_file), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(store_url),
        )
        for action in ("approve", "reject")
    ]
    go.write_text("go")
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[0]["errors"] == [] and results[1]["errors"] == []
    assert results[0]["won"] + results[1]["won"] == 200
    decisions = services.events.read(types=["MemoryAccepted", "MemoryRejected"])
    per_memory: dict[str, list[str]] = {}
    for event in decisions:
        per_memory.setdefault(event.payload.memory_id, []).append(event.type)
    assert sorted(per_memory) == sorted(ids)
    for memory_id in ids:
        assert len(per_memory[memory_id]) == 1
        expected = "accepted" if per_memory[memory_id][0] == "MemoryAccepted" else "rejected"
        assert services.memories.get(memory_id).status.value == expected


WRITER = textwrap.dedent(
    """
    import sys
    from kairox.services import Services
    from kairox.core.events import UserMessageAdded

    services = Services.open(sys.argv[1])
    i = 0
    while True:
        i += 1
        event = services.events.append(UserMessageAdded(turn=i, text=f"message {i}"),
                                       session_id="ses_crash", workspace_id="ws")
        print(event.seq, flush=True)
    """
)


def test_sigkill_mid_burst_loses_no_committed_event(
    tmp_path: Path, kairox_home: Path, store_url: str | None
) -> None:
    Services.open(kairox_home, store_url=store_url).close()  # migrate first: the writer appends
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(kairox_home)],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(store_url),
    )
    assert proc.stdout is not None
    seen: list[int] = []
    for line in proc.stdout:
        seen.append(int(line))
        if len(seen) >= 300:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    services = Services.open(kairox_home, store_url=store_url)
    if store_url is None:
        assert services.db.query_one("PRAGMA integrity_check")[0] == "ok"
    stored = {e.seq for e in services.events.read(session_id="ses_crash")}
    assert set(seen) <= stored
