"""Recall's statistics belong to the searcher: a score depends only on the searched workspace (or
session), the IDF never reaches zero (a 4-unit history still scores), a hit with no evidence is
never returned, and hits under the floor are counted, not returned."""

from __future__ import annotations

from pathlib import Path

from kairox.app import AppFacade
from kairox.core.events import UserMessageAdded
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.history import HistoryIndex
from kairox.services import Services
from kairox.store.records import SessionInfo
from kairox.testing.clock import FakeClock


def say(services: Services, session: SessionInfo, *texts: str) -> None:
    for turn, text in enumerate(texts, start=1):
        services.events.append(
            UserMessageAdded(turn=turn, text=text),
            session_id=session.id,
            workspace_id=session.workspace_id,
        )


def setup(tmp_path: Path) -> tuple[Services, HistoryIndex, SessionInfo, SessionInfo]:
    services = Services.open(tmp_path / "home", clock=FakeClock())
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = services.sessions.start("main", tmp_path / "a", "local")
    b = services.sessions.start("main", tmp_path / "b", "local")
    return (
        services,
        HistoryIndex(services.history, services.events, create_embedder("hashing")),
        a,
        b,
    )


def scores(index: HistoryIndex, query: str, workspace_id: str) -> list[tuple[str, float]]:
    return [(h.text, h.score) for h in index.search(query, workspace_id=workspace_id, k=10)]


def test_another_workspaces_traffic_never_changes_a_score(tmp_path: Path) -> None:
    services, index, a, b = setup(tmp_path)
    say(services, b, "Please give me short answers from now on.", "What is the build command?")
    before = scores(index, "short answers", b.workspace_id)
    assert before[0][0] == "Please give me short answers from now on." and before[0][1] > 0.5
    say(services, a, *["I like short answers."] * 3)  # the words become common in workspace A
    assert scores(index, "short answers", b.workspace_id) == before
    assert len(scores(index, "short answers", a.workspace_id)) == 3


def test_a_word_in_half_of_a_four_unit_history_still_scores(tmp_path: Path) -> None:
    services, index, _, b = setup(tmp_path)
    say(
        services,
        b,
        "The deploy runs on Fridays.",
        "Lunch is at noon.",
        "Roll back the deploy if the checks fail.",
        "The office is closed on Monday.",
    )
    found = scores(index, "deploy", b.workspace_id)
    assert {text for text, _ in found[:2]} == {
        "The deploy runs on Fridays.",
        "Roll back the deploy if the checks fail.",
    }
    assert all(
        score >= 0.2 for _, score in found[:2]
    )  # over the floor; FTS5's IDF made these about 3e-6
    # the units after them match only by their context (the turn before): weaker, still > 0
    assert all(0 < score < found[1][1] for _, score in found[2:])


def test_hits_without_evidence_are_never_returned(tmp_path: Path) -> None:
    services, index, _, b = setup(tmp_path)
    say(services, b, *(f"Unrelated message number {i} about lunch." for i in range(6)))
    assert index.search("login flow", workspace_id=b.workspace_id, k=10) == []


async def test_recall_counts_hits_under_the_floor_and_never_returns_them(tmp_path: Path) -> None:
    services, _, _, b = setup(tmp_path)
    say(
        services,
        b,
        "alpha",
        "alpha bravo charlie delta echo foxtrot",
        *(f"filler line {i}" for i in range(6)),
    )
    facade = AppFacade(services)
    try:
        result = await facade.retrieval.recall(
            "alpha bravo charlie delta echo foxtrot golf hotel india juliet",
            workspace=tmp_path / "b",
        )
    finally:
        facade.close()
    assert result.floor == 0.2
    assert result.hits[0].text == "alpha bravo charlie delta echo foxtrot"
    # "alpha" alone has evidence (one word of ten) but scores under the floor: counted, not shown
    assert "alpha" not in [h.text for h in result.hits]
    assert result.below_floor >= 1
    assert all(h.score >= 0.2 for h in result.hits)
