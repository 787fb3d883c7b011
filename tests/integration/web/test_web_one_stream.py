"""The web stream over a real server: a turn with a proposal, and a decision from another process,
reach ``/api/events/stream`` once per committed event, in seq order."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from kairox.web import ServerOptions, WebServer

REPLY = 'Sure. <memory scope="user" key="editor.font">JetBrains Mono</memory> Noted.'


async def test_the_event_stream_carries_each_event_of_a_turn_once_in_seq_order(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": REPLY, "chunk": 4}) + "\n", encoding="utf-8")
    options = ServerOptions(
        workspace=workspace,
        port=0,
        home=kairox_home,
        model=f"scripted:{script}",
        poll_s=0.05,
        heartbeat_s=1.0,
    )
    with WebServer(options) as server:
        auth = {"Authorization": f"Bearer {server.token}"}
        async with httpx.AsyncClient(base_url=server.base_url, headers=auth, timeout=60) as c:
            assert (await c.post("/api/sessions", json={"name": "s"})).status_code == 201
            last = (await c.get("/api/events/last")).json()["last_seq"]
            received: list[tuple[int, str]] = []
            subscribed = asyncio.Event()

            async def follow() -> None:
                async with c.stream("GET", "/api/events/stream", params={"after": last}) as r:
                    subscribed.set()
                    seq = 0
                    async for line in r.aiter_lines():
                        if line.startswith("id: "):
                            seq = int(line[4:])
                        elif line.startswith("event: "):
                            received.append((seq, line[7:]))

            following = asyncio.create_task(follow())
            await asyncio.wait_for(subscribed.wait(), timeout=30)

            # The page's way to send: the answer is the outcome, the events come on the stream.
            answer = await c.post(
                "/api/sessions/s/messages",
                json={"text": "my font is JetBrains Mono"},
                headers={"Accept": "application/json"},
            )
            assert answer.headers["content-type"].startswith("application/json")
            outcome = answer.json()
            assert outcome["failure"] is None and outcome["reply"] == "Sure.  Noted."
            [proposal] = outcome["proposals"]

            # Another process decides the proposal.
            env = {**os.environ, "KAIROX_HOME": str(kairox_home)}
            await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "kairox", "memory", "approve", proposal["id"]],
                check=True,
                capture_output=True,
                timeout=120,
                env=env,
            )
            # A last event: once it has arrived, everything before it has too.
            sentinel = (await c.post("/api/sessions", json={"name": "sentinel"})).json()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 60
            while sentinel["started_seq"] not in {seq for seq, _ in received}:
                assert loop.time() < deadline, f"the stream stopped at {received[-1:]}"
                await asyncio.sleep(0.02)
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)

            log = (await c.get("/api/events", params={"after": last})).json()
            assert received == [(e["seq"], e["type"]) for e in log]  # once each, in seq order
            types = [t for _, t in received]
            assert types.count("MemoryProposed") == 1
            assert types.count("MemoryAccepted") == 1
            assert types.count("UserMessageAdded") == 1
            assert types.count("ModelTokenDelta") >= 1  # coalesced: a short reply is 1-2 rows
