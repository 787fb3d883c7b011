"""Recall on both stores: ``kairox recall`` through the real binary, a turn's recall and the web
search box find the same hits, with the same scores, on SQLite and on Postgres (where recall used
to fail: its index lived in a local SQLite file that had no ``sessions`` table)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from helpers import kx, use_scripted_model
from kairox.app import AppFacade
from kairox.core.config import RecallConfig
from kairox.runtime.recall import SessionRecall
from kairox.services import Services
from kairox.web import SecurityConfig, WebContext, create_app

SAID = ("Schedule the database cutover for Thursday night.", "My cat Miso likes short answers.")
REPLIES = ("Noted: the cutover is Thursday.", "Understood, short answers it is.")


def env(home: Path, url: str | None) -> dict[str, str]:
    """The CLI's environment for ``home`` on SQLite, or on the Postgres at ``url``."""
    return {"KAIROX_HOME": str(home), **({"KAIROX_STORE_URL": url} if url else {})}


def shape(hits: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(h["session"], h["turn"], h["role"], h["score"], h["snippet"]) for h in hits]


def test_kairox_recall_on_postgres_finds_what_sqlite_finds(
    workspace: Path, pg_url: str, tmp_path: Path
) -> None:
    use_scripted_model(workspace, *REPLIES)
    found = {}
    for name, url in (("sqlite", None), ("postgres", pg_url)):
        home = tmp_path / f"home-{name}"
        for text in SAID:
            sent = kx("send", "--session", "ops", text, cwd=workspace, env=env(home, url))
            assert sent.returncode == 0, sent.stderr
        done = kx("recall", "cat Miso", "--json", cwd=workspace, env=env(home, url))
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        assert data["indexed"] == 4 and data["floor"] == 0.2
        found[name] = shape(data["hits"])
        text = kx("recall", "cutover", "--session", "ops", cwd=workspace, env=env(home, url))
        assert text.returncode == 0 and "ops turn 1" in text.stdout, text.stderr
    assert found["postgres"] == found["sqlite"]
    assert found["sqlite"][0][4] == "My cat Miso likes short answers."


async def turn_and_web_box(home: Path, url: str | None, workspace: Path, model: str) -> object:
    facade = AppFacade(Services.open(home, store_url=url), model=model)
    try:
        info = await facade.chat.open("ops", workspace=workspace)
        for text in SAID:
            await facade.chat.run(info.id, text)
        # A turn's recall: the session's own history, the floor applied by its assembler.
        recall = SessionRecall(
            facade.sources.history_index("hashing"),
            RecallConfig(),
            workspace_id=info.workspace_id,
            session_id=info.id,
            floor=0.2,
        )
        turn = [
            (h.chunk_id.startswith("seq:"), h.title, round(h.score, 6), h.text.split(": ", 1)[1])
            for h in await recall.for_turn("cat Miso", exclude=(), before_seq=10**9)
        ]
        security = SecurityConfig(port=8999)
        ctx = WebContext(facade=facade, workspace=workspace, security=security)
        headers = {"Authorization": f"Bearer {security.token}"}
        transport = httpx.ASGITransport(app=create_app(ctx))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8999", headers=headers
        ) as client:
            box = await client.get("/api/sessions/ops/context/recall", params={"q": "cat Miso"})
        assert box.status_code == 200, box.text
        return turn, shape(box.json()["hits"])
    finally:
        await facade.aclose()
        facade.close()


async def test_a_turn_and_the_web_search_box_recall_the_same_on_both_stores(
    workspace: Path, pg_url: str, tmp_path: Path
) -> None:
    model = use_scripted_model(workspace, *REPLIES)
    on_sqlite = await turn_and_web_box(tmp_path / "a", None, workspace, model)
    on_postgres = await turn_and_web_box(tmp_path / "b", pg_url, workspace, model)
    assert on_postgres == on_sqlite
    turn, box = on_sqlite  # type: ignore[misc]
    assert turn[0][3] == "My cat Miso likes short answers." and turn[0][0]
    assert box[0][4] == "My cat Miso likes short answers."
