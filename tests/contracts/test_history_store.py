"""Contract suite for ``HistoryStore`` (the recall index), run over SQLite and Postgres: the same
units, scopes, statistics and ranking on both, and a fixed history recalled identically."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kairox.core.events import AssistantMessageCompleted, TurnFailed, UserMessageAdded
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.history import HistoryIndex
from kairox.retrieval.search import HybridRanker
from kairox.services import Services
from kairox.store.history import history_scope
from kairox.store.protocols import HistoryStore
from kairox.store.records import HistoryUnit
from kairox.testing.clock import FakeClock

FIXED_HISTORY = (
    ("ops", "Schedule the database cutover for Thursday night."),
    ("ops", "Noted: the cutover is on Thursday at 22:00."),
    ("ops", "My cat Miso likes short answers."),
    ("ops", "Understood, short answers it is."),
    ("notes", "The login flow redirects twice before the dashboard."),
    ("notes", "Fix the redirect in the login flow first."),
)


@pytest.fixture
def services(tmp_path: Path, store_url: str | None) -> Iterator[Services]:
    opened = Services.open(tmp_path / "home", clock=FakeClock(), store_url=store_url)
    yield opened
    opened.close()


def unit(seq: int, text: str, *, ws: str = "ws_a", session: str = "ses_1") -> HistoryUnit:
    return HistoryUnit(seq, ws, session, 1, "user", "user", "2026-01-01T00:00:00Z", text)


def test_units_scopes_and_statistics(services: Services) -> None:
    store: HistoryStore = services.history
    assert store.last_seq() == 0 and store.unit_count() == 0
    units = [
        unit(1, "alpha beta"),
        unit(2, "alpha gamma", session="ses_2"),
        unit(3, "alpha alpha delta", ws="ws_b", session="ses_3"),
    ]
    assert store.add_units(units, last_seq=5) == 3
    assert store.add_units(units[:1], last_seq=4) == 0  # already there; the watermark stays
    assert store.last_seq() == 5
    assert (store.unit_count(), store.unit_count("ws_a"), store.unit_count("ws_b")) == (3, 2, 1)
    assert store.last_unit("ses_2") == units[1]
    assert store.get_units([3, 1, 99]) == [units[2], units[0]]
    # The keyword feed is the scope's own: the workspace, or one session of it.
    assert store.keyword_weights == (0.5, 1.0, 0.3)
    assert sorted(i for i, _ in store.keyword_keys("ws_a")) == [1, 2]
    assert [i for i, _ in store.keyword_keys(history_scope("ws_a", "ses_2"))] == [2]
    assert store.keyword_documents("ws_b") == [(3, ("user", "alpha alpha delta", ""))]
    assert store.keyword_documents("ws_a", [2, 3]) == [(2, ("user", "alpha gamma", ""))]
    assert [i for i, _ in store.keyword_documents("ws_a", after_id=1)] == [2]
    # Each unit's session, for the recall's session documents: the workspace's own, by id.
    assert store.unit_sessions("ws_a") == [(1, "ses_1"), (2, "ses_2")]
    assert store.unit_sessions("ws_a", after_id=1) == [(2, "ses_2")]
    assert store.unit_sessions("ws_b") == [(3, "ses_3")]
    # Keyword ranking (the in-memory index over that feed) never leaves its scope, and a word
    # in every unit still scores (IDF > 0).
    ranker = HybridRanker(store, create_embedder("hashing"))
    assert [i for i, _ in ranker.keyword("ws_a", "alpha", 10)] == [1, 2]
    assert all(s > 0 for _, s in ranker.keyword("ws_a", "alpha", 10))
    assert [i for i, _ in ranker.keyword("ws_b", "alpha", 10)] == [3]
    assert ranker.keyword(history_scope("ws_a", "ses_2"), "beta", 10) == []


def test_vectors_round_trip_per_scope(services: Services) -> None:
    store = services.history
    store.add_units([unit(1, "a"), unit(2, "b", session="ses_2")], last_seq=2)
    generation = store.generation("ws_a")
    missing = store.units_missing_vectors("ws_a", "m", limit=10)
    assert [u.id for u in missing] == [1, 2]
    vectors = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32)
    store.put_vectors("ws_a", "m", [1, 2], vectors)
    assert store.generation("ws_a") > generation
    assert store.units_missing_vectors("ws_a", "m", limit=10) == []
    ids, matrix = store.load_vectors("ws_a", "m")
    assert ids.tolist() == [1, 2] and np.allclose(matrix, vectors)
    ids, matrix = store.load_vectors_after(history_scope("ws_a", "ses_2"), "m", 0)
    assert ids.tolist() == [2] and np.allclose(matrix, vectors[1:])


def recall_fixed_history(services: Services, workspace: Path) -> dict[str, list[tuple[int, str]]]:
    sessions = {}
    for name, text in FIXED_HISTORY:
        if name not in sessions:
            sessions[name] = services.sessions.start(name, workspace, "local")
        info = sessions[name]
        turn = sum(1 for n, _ in FIXED_HISTORY[: FIXED_HISTORY.index((name, text))] if n == name)
        payload = (
            UserMessageAdded(turn=turn + 1, text=text)
            if "Noted" not in text and "Understood" not in text
            else AssistantMessageCompleted(turn=turn, text=text, model="m")
        )
        services.events.append(payload, session_id=info.id, workspace_id=info.workspace_id)
    index = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    ws = next(iter(sessions.values())).workspace_id
    found = {}
    for query in ("cat Miso", "short answers", "login flow", "Thursday cutover", "zebra"):
        hits = index.search(query, workspace_id=ws, k=10)
        found[query] = [(h.seq - sessions["ops"].started_seq, f"{h.score:.4f}") for h in hits]
    index.close()
    return found


def test_a_fixed_history_recalls_the_same_on_both_stores(
    services: Services, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    found = recall_fixed_history(services, workspace)
    reference = Services.open(tmp_path / "sqlite-home", clock=FakeClock(), store_url=None)
    try:
        assert found == recall_fixed_history(reference, workspace)
    finally:
        reference.close()
    assert [seq for seq, _ in found["cat Miso"]] == [3, 4]  # 4 by its context: the turn before
    assert [seq for seq, _ in found["short answers"]] == [4, 3]
    assert found["zebra"] == []  # no evidence on either side: no hit, never a 0.000
    assert all(float(score) > 0 for hits in found.values() for _, score in hits)


def test_a_recall_after_new_events_sees_them_and_never_a_failed_turn(
    services: Services, tmp_path: Path
) -> None:
    """A search keeps the units it returned and the failed turns it saw: a turn said after a
    search is found by the next one, a turn that fails after being returned is not, and a
    failure another process indexed (another index on the same store) counts too."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    info = services.sessions.start("main", workspace, "local")
    ws = info.workspace_id

    def say(payload: UserMessageAdded | TurnFailed) -> int:
        return services.events.append(payload, session_id=info.id, workspace_id=ws).seq

    first = say(UserMessageAdded(turn=1, text="The staging cluster runs on Kubernetes."))
    index = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    assert [h.seq for h in index.search("staging cluster", workspace_id=ws)] == [first]

    second = say(UserMessageAdded(turn=2, text="The staging cluster moved to Nomad."))
    found = index.search("staging cluster", workspace_id=ws)
    assert {h.seq for h in found} == {first, second}
    assert {h.session for h in found} == {"main"}

    say(TurnFailed(turn=2, reason="the model timed out"))  # after its unit was returned
    assert [h.seq for h in index.search("staging cluster", workspace_id=ws)] == [first]

    # Another process's index catches up past a failure: this index still honours it.
    third = say(UserMessageAdded(turn=3, text="Nomad schedules the staging cluster."))
    say(TurnFailed(turn=3, reason="cancelled"))
    other = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    other.catch_up()
    assert services.history.last_seq() > third
    assert third not in {h.seq for h in index.search("Nomad staging", workspace_id=ws)}
    fresh = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    assert [h.seq for h in fresh.search("staging cluster", workspace_id=ws)] == [first]

    # A turn another process indexed and embedded (nothing left for this index to add) is
    # still found: the generation moved, so the keyword index catches up.
    fourth = say(UserMessageAdded(turn=4, text="Consul fronts the staging cluster."))
    other.refresh(ws)
    assert fourth in {h.seq for h in index.search("Consul staging", workspace_id=ws)}
    for opened in (index, other, fresh):
        opened.close()
