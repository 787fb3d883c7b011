"""Recall's session documents: a turn gains from how well its whole session matches the query
(one keyword document per session of the workspace, grown as turns are appended), never within
one session's search, and the boost reorders the lexical-first, BM25 and min-max rankings."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kairox.core.events import UserMessageAdded
from kairox.retrieval.bm25 import KeywordIndex
from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.fusion import Evidence, FusionMethod, SearchOptions, fuse
from kairox.retrieval.history import SESSION_WEIGHT, HistoryIndex
from kairox.retrieval.relevance import cosine_scale
from kairox.services import Services
from kairox.store.records import SessionInfo
from kairox.testing.clock import FakeClock


def say(services: Services, session: SessionInfo, text: str) -> int:
    event = services.events.append(
        UserMessageAdded(turn=1, text=text),
        session_id=session.id,
        workspace_id=session.workspace_id,
    )
    return event.seq


def test_a_turn_whose_session_holds_the_other_query_words_ranks_first(tmp_path: Path) -> None:
    services = Services.open(tmp_path / "home", clock=FakeClock())
    (tmp_path / "ws").mkdir()
    walks = services.sessions.start("walks", tmp_path / "ws", "local")
    vet = services.sessions.start("vet", tmp_path / "ws", "local")
    ws = walks.workspace_id
    # The same words in two sessions: without a session signal the older turn wins the tie.
    b1 = say(services, walks, "I walked the dog today.")
    say(services, walks, "Grocery prices went up again.")
    a1 = say(services, vet, "I walked the dog today.")
    say(services, vet, "Grocery prices went up again.")
    boosted = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    plain = HistoryIndex(
        services.history, services.events, create_embedder("hashing"), session_weight=0.0
    )

    def order(index: HistoryIndex, fusion: FusionMethod | None = None) -> list[int]:
        hits = index.search("dog vet", workspace_id=ws, k=10, fusion=fusion)
        return [h.seq for h in hits if h.seq in (a1, b1)]

    assert order(boosted) == [b1, a1]  # both sessions match "dog" alike: no boost either way
    # The vet session gains "vet" later: its document grows, so its dog turn now comes first.
    say(services, vet, "The vet checked the puppy's teeth.")
    assert order(boosted) == [a1, b1]
    assert order(boosted, FusionMethod.BM25) == [a1, b1]
    assert order(plain) == [b1, a1]  # the session weight is what moved it
    # Within one session there is nothing to compare: the search is unchanged.
    scoped = boosted.search("dog vet", workspace_id=ws, session_id=walks.id, k=10)
    assert scoped == plain.search("dog vet", workspace_id=ws, session_id=walks.id, k=10)
    assert scoped[0].seq == b1
    assert 0.0 < SESSION_WEIGHT < 1.0
    boosted.close()
    plain.close()
    services.close()


def test_the_boost_is_added_to_the_min_max_fused_score() -> None:
    ids = np.array([1, 2], dtype=np.int64)
    cosines = np.array([0.5, 0.5], dtype=np.float32)
    keyword = [(1, 2.0), (2, 2.0)]
    vector = [(1, 0.5), (2, 0.5)]
    evidence = Evidence((1.0,), 1.0, cosine_scale("hashing"))
    options = SearchOptions()

    def ranked(boost: dict[int, float] | None) -> list[int]:
        fused = fuse(FusionMethod.MINMAX, keyword, vector, ids, cosines, options, evidence, boost)
        return [cid for cid, *_ in fused]

    assert ranked(None) == [1, 2]
    assert ranked({2: 0.1}) == [2, 1]
    fused = fuse(
        FusionMethod.LEXICAL_FIRST, keyword, vector, ids, cosines, options, evidence, {2: 0.1}
    )
    assert [cid for cid, *_ in fused] == [2, 1]
    assert [b for _, _, b, _ in fused] == [2.0, 2.0]  # raw BM25 kept


def test_a_growing_session_is_scored_like_one_document_of_all_its_turns(tmp_path: Path) -> None:
    services = Services.open(tmp_path / "home", clock=FakeClock())
    (tmp_path / "ws").mkdir()
    long = services.sessions.start("long", tmp_path / "ws", "local")
    short = services.sessions.start("short", tmp_path / "ws", "local")
    texts = {short.id: ["The kettle is broken, the kettle!"], long.id: []}
    say(services, short, texts[short.id][0])
    index = HistoryIndex(services.history, services.events, create_embedder("hashing"))
    ws = long.workspace_id
    for n in range(12):  # a search after every turn, as a running agent's recall does
        texts[long.id].append(f"Step {n} of the migration is done; the kettle waits.")
        say(services, long, texts[long.id][-1])
        index.search("migration kettle", workspace_id=ws, k=5)
    sessions = index._ranker._sessions[ws]
    assert len(sessions) == 2 and len(sessions.slot_of_unit) == 13
    slot = {sid: sessions.slot_of_unit[min(u.id for u in units)] for sid, units in (
        (sid, [u for u in services.history.get_units(list(sessions.slot_of_unit))
               if u.session_id == sid]) for sid in texts)}  # fmt: skip
    # The same BM25 as a keyword index over one (speakers, contents) document per session.
    reference = KeywordIndex((0.5, 1.0))
    reference.add(
        [(slot[sid], (" ".join(["user"] * len(t)), "\n".join(t))) for sid, t in texts.items()]
    )
    for query in (["kettl"], ["step", "migrat"], ["0"], ["11", "kettl", "kettl"]):
        expected = dict(reference.search(query, 10))
        got = sessions.scores(query)
        assert expected and got.keys() == expected.keys()
        assert all(abs(got[k] - expected[k]) < 1e-9 for k in got)
    assert set(sessions.scores(["0"])) == {slot[long.id]}  # its first step as well as its last
    assert set(sessions.scores(["11"])) == {slot[long.id]}
    index.close()
    services.close()
