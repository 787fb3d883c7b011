"""Accepting a summary only when it frees tokens and keeps the pinned items; the fallback."""

from __future__ import annotations

from compaction_log import Log, make_target, words

from kairox.compaction.layers import choose_layer
from kairox.compaction.policy import project
from kairox.compaction.verify import (
    CANDIDATE_SEQ,
    candidate,
    fallback,
    verify,
    with_summary,
)
from kairox.context.history import load_history
from kairox.core.types import Actor, MemoryScope


def six_turns(log: Log, size: int = 50) -> None:
    for _ in range(6):
        log.turn(words(size), words(size, "beta"))


def test_a_short_summary_is_accepted_and_stands_in_for_its_range(log: Log) -> None:
    six_turns(log)
    target = make_target(log)
    layer = choose_layer(target, want=300)
    assert layer is not None
    summary = candidate(target, layer, "The user wrote many alphas; the assistant betas.")
    assert summary.tokens_after < summary.tokens_before
    assert verify(target, summary).accepted
    history = load_history(log.services.events, log.session.id, target.tokenizer)
    replaced = with_summary(target, history, summary)
    assert replaced[0].seq == CANDIDATE_SEQ and replaced[0].replaces == (
        layer.from_seq,
        layer.to_seq,
    )
    assert all(h.seq > layer.to_seq for h in replaced[1:])


def test_a_summary_that_frees_nothing_is_rejected(log: Log) -> None:
    six_turns(log, size=10)
    target = make_target(log)
    layer = choose_layer(target, want=1)
    assert layer is not None
    verdict = verify(target, candidate(target, layer, words(200, "gamma")))
    assert not verdict.accepted and "frees no tokens" in (verdict.reason or "")


def test_every_open_task_must_survive(log: Log) -> None:
    log.turn("TODO: migrate the db to postgres\n" + words(100), "ok")
    log.turn(words(50), "ok")
    log.turn("latest", "ok")
    target = make_target(log)
    layer = choose_layer(target, want=1)
    assert layer is not None and layer.open_tasks == ("migrate the db to postgres",)
    missing = verify(target, candidate(target, layer, "The user talked about databases."))
    assert not missing.accepted and "migrate the db to postgres" in (missing.reason or "")
    kept = candidate(target, layer, "Open: Migrate the DB to  postgres (asked in turn 1).")
    assert verify(target, kept).accepted  # case and spacing do not matter


def test_a_summary_that_does_not_fit_the_next_context_is_rejected(log: Log) -> None:
    log.turn(words(3000), "ok")
    for _ in range(3):
        log.turn(words(450), "ok")
    target = make_target(log)
    layer = choose_layer(target, want=1)
    assert layer is not None
    summary = candidate(target, layer, words(2500, "gamma"))  # the summary comes first: too big
    assert summary.tokens_after < summary.tokens_before
    verdict = verify(target, summary)
    assert not verdict.accepted and "does not fit" in (verdict.reason or "")


def test_approved_memories_stay_pinned(log: Log) -> None:
    memories = log.services.memories
    proposed = memories.propose(
        MemoryScope.USER,
        "editor.font",
        "JetBrains Mono",
        workspace_id=log.session.workspace_id,
        session_id=log.session.id,
    )
    memories.accept(proposed.id, actor=Actor.USER)
    six_turns(log)
    target = make_target(log)
    layer = choose_layer(target, want=300)
    assert layer is not None
    summary = candidate(target, layer, "short")
    assert verify(target, summary).accepted
    history = load_history(log.services.events, log.session.id, target.tokenizer)
    after = target.dry_run(with_summary(target, history, summary))
    refs = {i.ref for i in after.trace.items if i.included}
    assert any(ref.startswith(f"mem:{proposed.id}@") for ref in refs)


def test_fallback_drops_the_layer_and_notes_it(log: Log) -> None:
    log.turn("TODO: write the changelog\n" + words(60), words(60, "beta"))
    six_turns(log)
    first = log.summary(log.seqs[1][0], log.seqs[1][-1], "Earlier: the user likes tea.")
    log.turn(words(20), "ok")
    target = make_target(log)
    layer = choose_layer(target, want=200)
    assert layer is not None and layer.previous is not None
    made = fallback(target, layer)
    assert made == fallback(target, layer)  # deterministic
    assert made.fallback and made.previous_seq == first.seq
    assert made.from_seq == log.seqs[1][0] and made.to_seq == layer.to_seq
    lines = made.text.splitlines()
    assert lines[0] == "Earlier: the user likes tea."
    turns = layer.turns
    assert turns is not None
    assert lines[1].startswith(f"[turns {turns[0]}-{turns[1]} (events {layer.layer_from_seq}-")
    assert "dropped without a summary" in lines[1]
    assert made.open_tasks == ()  # the task was in turn 1, summarised before without the marker
    assert made.tokens_after < made.tokens_before


def test_fallback_keeps_only_the_most_recent_turns_that_fit(log: Log) -> None:
    log.turn("TODO: keep me\n" + words(10), "ok")
    for _ in range(8):
        log.turn(words(300), words(100, "beta"))
    target = make_target(log)
    layer = choose_layer(target, want=1)
    assert layer is not None and layer.to_seq == log.seqs[1][-1]
    made = fallback(target, layer)
    assert made.to_seq > layer.to_seq  # more than the layer had to go
    assert made.open_tasks == ("keep me",) and made.text.endswith("Open tasks: keep me")
    kept = [
        h
        for h in load_history(log.services.events, log.session.id, target.tokenizer)
        if h.seq > made.to_seq
    ]
    assert kept[0].kind == "user"  # whole turns
    room = project(target).limit - project(target).base
    assert sum(h.tokens for h in kept) + made.tokens_after <= room
    assert log.seqs[9][0] >= kept[0].seq  # the latest turn is kept


def test_fallback_always_keeps_the_latest_turn(log: Log) -> None:
    log.turn(words(50), "ok")
    log.turn(words(1400), "ok")
    target = make_target(log)
    layer = choose_layer(target, want=1)
    assert layer is not None
    made = fallback(target, layer)
    assert made.to_seq == log.seqs[1][-1] < log.seqs[2][0]
