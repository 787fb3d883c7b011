"""Context assembly cost per turn as history grows: 1k, 10k and 100k events, 128k-token budget.

Each session lives in a real SQLite home, with token counts cached at append time. The measured
path is what a turn runs: read history newest first until the budget is filled (cached counts),
then assemble. The baseline, in the same run, reads the whole history and re-tokenises it.

    .venv/bin/python bench/assembly.py [--sizes 1000,10000,100000] [--runs 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from kairox.context.assembler import AssemblyInput, ContextAssembler
from kairox.context.history import HistoryItem, item_messages, load_history
from kairox.context.history_cache import HistoryCache
from kairox.context.render import message_cost
from kairox.context.tokens import Tokenizer, TokenizerRegistry
from kairox.context.windows import Budget
from kairox.core.events import (
    AssistantMessageCompleted,
    EventPayload,
    ToolInvocationCompleted,
    UserMessageAdded,
)
from kairox.core.records import MemoryRecord
from kairox.core.types import Actor, MemoryScope, MemoryStatus
from kairox.retrieval.types import RetrievalHit
from kairox.store.db import Database
from kairox.store.events import SqliteEventStore
from kairox.testing import FakeClock

BUDGET = Budget(window=128_000 + 16_384, headroom=16_384, budget=128_000)
SESSION = "bench-session"
VOCABULARY = (
    "the a of to and in is it for on with as context token budget memory history tool result "
    "file path def return import class self value error test run build assemble event seq "
    "window headroom replay trace summary chunk workspace knowledge base prompt user assistant "
    "= ( ) { } [ ] : , . 0 1 2 3 42 1024 \n"
)
WORDS = VOCABULARY.split(" ")


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def event(rng: random.Random, index: int) -> EventPayload:
    turn = index // 3 + 1
    kind = index % 3
    if kind == 0:
        return UserMessageAdded(turn=turn, text=text(rng, rng.randint(5, 150)))
    if kind == 1 and rng.random() < 0.5:
        return ToolInvocationCompleted(
            turn=turn,
            call_id=f"call_{index}",
            name="read_file",
            arguments=f'{{"path": "src/module_{index % 97}.py"}}',
            result=text(rng, rng.choice((40, 200, 600, 1500))),
        )
    return AssistantMessageCompleted(
        turn=turn, text=text(rng, rng.choice((20, 80, 250, 700))), model="bench"
    )


def build(path: Path, size: int, tok: Tokenizer) -> SqliteEventStore:
    db = Database.open(path / "k.db")
    events = SqliteEventStore(db, FakeClock())
    rng = random.Random(size)
    with db.atomic():
        for index in range(size):
            events.append(event(rng, index), session_id=SESSION, workspace_id="w", counter=tok)
    return events


def inputs() -> tuple[list[MemoryRecord], list[RetrievalHit], list[RetrievalHit]]:
    rng = random.Random(7)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    memories = [
        MemoryRecord(
            id=f"mem_{i}",
            scope=MemoryScope.USER,
            key=f"pref.item_{i}",
            body=text(rng, 30),
            status=MemoryStatus.ACCEPTED,
            version=1,
            workspace_id=None,
            session_id=None,
            created_at=now,
            updated_at=now + timedelta(seconds=i),
            approved_at=now,
            decided_by=Actor.USER,
            decision_reason=None,
            proposed_session_id=None,
            proposed_turn=None,
            untrusted_inputs=(),
        )
        for i in range(20)
    ]
    hits = [
        RetrievalHit(
            source=f"workspace:src/m{i}.py",
            chunk_id=str(i),
            text=text(rng, 250),
            score=1.0 - i / 10,
            path=f"src/m{i}.py",
            start_line=1,
            end_line=40,
        )
        for i in range(6)
    ]
    kb = [
        RetrievalHit(source="kb:docs", chunk_id=f"d{i}", text=text(rng, 250), score=0.5)
        for i in range(4)
    ]
    return memories, hits, kb


INPUTS = inputs()


def assembly_input(history: list[HistoryItem]) -> AssemblyInput:
    memories, hits, kb = INPUTS  # retrieval and the memory store are not what is measured here
    return AssemblyInput(
        system_prompt="You are Kairox, a careful assistant.",
        instructions="Answer briefly.",
        memories=memories,
        workspace_hits=hits,
        kb_hits=kb,
        history=history,
        prompt="What did we decide about the token budget?",
        turn=10**6,
        model="openai:gpt-4o",
    )


def turn(events: SqliteEventStore, tok: Tokenizer, assembler: ContextAssembler) -> int:
    history = load_history(events, SESSION, tok, max_tokens=BUDGET.budget)
    return assembler.assemble(assembly_input(history)).trace.used


def cached_turns(
    events: SqliteEventStore, tok: Tokenizer, assembler: ContextAssembler, runs: int
) -> tuple[float, float]:
    """What a session's turns cost in a process that keeps its history (``HistoryCache``, as
    the engine does): each turn appends a question and a reply (not timed), then loads the
    history and assembles. Median wall and CPU ms."""
    cache = HistoryCache(events, SESSION)
    cache.load(tok, max_tokens=BUDGET.budget)  # the session's first turn in this process
    rng = random.Random(1)
    wall: list[float] = []
    cpu: list[float] = []
    for i in range(runs):
        events.append(event(rng, 0), session_id=SESSION, workspace_id="w", counter=tok)
        events.append(event(rng, 2), session_id=SESSION, workspace_id="w", counter=tok)
        start, start_cpu = time.perf_counter(), time.process_time()
        history = cache.load(tok, max_tokens=BUDGET.budget)
        assembler.assemble(assembly_input(history))
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        if i == 0:
            assert history == load_history(events, SESSION, tok, max_tokens=BUDGET.budget)
    return statistics.median(wall), statistics.median(cpu)


def baseline(events: SqliteEventStore, tok: Tokenizer, assembler: ContextAssembler) -> int:
    """The naive turn: read every event and re-tokenise all of history."""
    history: list[HistoryItem] = []
    for stored in events.read(session_id=SESSION):
        made = item_messages(stored.payload)
        if made is None:
            continue
        kind, messages = made
        tokens = sum(message_cost(tok, m) for m in messages)
        history.append(
            HistoryItem(
                seq=stored.seq,
                seqs=(stored.seq,),
                kind=kind,
                turn=None,
                messages=messages,
                tokens=tokens,
                ts=stored.ts,
            )
        )
    return assembler.assemble(assembly_input(history)).trace.used


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall-clock and median CPU milliseconds over ``runs`` calls."""
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline-runs", type=int, default=1)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    tok = TokenizerRegistry().get("o200k_base")
    assembler = ContextAssembler(tok, BUDGET)
    rows: list[tuple[int, float, float, float, float, float, int, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            start = time.perf_counter()
            events = build(Path(tmp) / str(size), size, tok)
            built = time.perf_counter() - start
            per_turn = partial(turn, events, tok, assembler)
            cold, _ = timed(per_turn, 1)  # the first turn caches the tool pairs' chat costs
            warm, warm_cpu = timed(per_turn, args.runs)
            base, base_cpu = timed(partial(baseline, events, tok, assembler), args.baseline_runs)
            used = turn(events, tok, assembler)
            kept, kept_cpu = cached_turns(events, tok, assembler, args.runs)
            rows.append((size, cold, warm, warm_cpu, base, base_cpu, used, kept, kept_cpu))
            print(
                f"built {size:>7,} events in {built:5.1f} s; assembly {warm:7.2f} ms, "
                f"kept history {kept:6.2f} ms, baseline {base:9.1f} ms",
                flush=True,
            )
    print()
    print(
        f"budget {BUDGET.budget:,} tokens, tokenizer {tok.name}; median of {args.runs} runs "
        f"(baseline: {args.baseline_runs}); wall-clock ms, CPU ms in brackets"
    )
    print(
        f"{'events':>9} {'used':>8} {'first turn':>11} {'ms per turn (read)':>19} "
        f"{'kept history':>17} {'baseline (re-tokenise)':>24} {'speed-up':>9}"
    )
    for size, cold, warm, warm_cpu, base, base_cpu, used, kept, kept_cpu in rows:
        print(
            f"{size:>9,} {used:>8,} {cold:>11.1f} {warm:>8.2f} ({warm_cpu:>6.2f}) "
            f"{kept:>8.2f} ({kept_cpu:>6.2f}) "
            f"{base:>12.1f} ({base_cpu:>9.1f}) {base / kept:>8.0f}x"
        )
    first, last = rows[0], rows[-1]
    print()
    print(
        f"flatness: time({last[0]:,}) / time({first[0]:,}) = {last[2] / first[2]:.2f} wall, "
        f"{last[3] / first[3]:.2f} CPU  (target <= 2)"
    )
    print(
        f"ms per turn at {last[0]:,} events: {last[2]:.2f} wall, {last[3]:.2f} CPU reading the "
        f"history; {last[7]:.2f} wall, {last[8]:.2f} CPU with the history kept (target <= 5; "
        f"{last[2] / last[7]:.1f}x faster than reading it)"
    )
    print(
        f"speed-up over re-tokenising at {last[0]:,}: {last[4] / last[7]:.0f}x wall, "
        f"{last[5] / last[8]:.0f}x CPU  (target >= 20x)"
    )


if __name__ == "__main__":
    main()
