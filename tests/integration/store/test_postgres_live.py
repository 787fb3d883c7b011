"""Live updates across processes on Postgres: a web server process sees a memory decision made by
a CLI process through NOTIFY. The server's poll interval is an hour, so only a notification can
deliver the event within the test's time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx

from kairox.core.types import MemoryScope
from kairox.services import Services

SERVER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from kairox.web.server import ServerOptions, prepare, serve

    options = ServerOptions(workspace=Path(sys.argv[1]), port=0, poll_s=3600.0, heartbeat_s=0.5)
    prepared = prepare(options)
    print(prepared.port, prepared.security.token, flush=True)
    asyncio.run(serve(options, prepared))
    """
)


def test_web_process_sees_a_cli_decision_via_notify(
    tmp_path: Path, workspace: Path, kairox_home: Path, pg_url: str
) -> None:
    env = {**os.environ, "KAIROX_STORE_URL": pg_url}
    services = Services.open(kairox_home, store_url=pg_url)
    # the server serves one workspace and streams only its events: propose in that workspace
    ws_id = services.sessions.ensure_workspace(workspace)
    proposal = services.memories.propose(
        MemoryScope.WORKSPACE, "db.engine", "Postgres", workspace_id=ws_id, session_id=None
    )
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    server = subprocess.Popen(
        [sys.executable, str(script), str(workspace)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert server.stdout is not None
        port, token = server.stdout.readline().split()
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {token}"}
        with (
            httpx.Client(base_url=base, headers=headers, timeout=60) as client,
            client.stream("GET", "/api/events/stream", params={"limit": 1}) as stream,
        ):
            assert stream.status_code == 200
            lines = stream.iter_lines()
            next(lines)  # the first heartbeat: the server is subscribed from here on
            cli = subprocess.run(
                [sys.executable, "-m", "kairox", "memory", "approve", proposal.id, "--json"],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert cli.returncode == 0, cli.stderr
            data = next(line for line in lines if line.startswith("data:"))
        event = json.loads(data.removeprefix("data:").strip())
        assert event["type"] == "MemoryAccepted"
        assert event["payload"]["memory_id"] == proposal.id
    finally:
        server.terminate()
        server.wait(timeout=30)
        services.close()
