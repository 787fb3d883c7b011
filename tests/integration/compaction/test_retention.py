"""Retention across compactions: a 60-turn session states 20 facts early, 5 become approved
memories; after several compactions the memories and the latest request are still in context,
and a known number of the other 15 facts survive in the summaries."""

from __future__ import annotations

from pathlib import Path

from compaction_chat import OpenChat, write_workspace

from kairox.core.events import CompactionSummary
from kairox.core.types import ContextSource

FACTS = {
    1: "my name is Ines Duarte",
    2: "I live in Porto",
    3: "my editor font is Iosevka",
    4: "the repository is called harbor",
    5: "we deploy on Tuesdays",
    6: "the staging host is heron.internal",
    7: "we use Conventional Commits",
    8: "my manager is Rui",
    9: "the database is PostgreSQL 16",
    10: "the API is versioned under /v3",
    11: "tests run with pytest-xdist",
    12: "the CI provider is Buildkite",
    13: "the product launch is on 12 May",
    14: "the mobile app uses Flutter",
    15: "the license is Apache-2.0",
    16: "logs go to Loki",
    17: "my timezone is Europe/Lisbon",
    18: "the design system is called Tide",
    19: "the main branch is trunk",
    20: "the cache is Redis 7",
}
# Facts the model proposes as memories, by scope; the user approves them all.
MEMORIES = {3: "user", 7: "workspace", 11: "workspace", 17: "user", 19: "workspace"}
# What each scripted summary keeps. The session compacts 8 times, after turns 9, 17, 24, 30, 36,
# 42, 48 and 54 (whole layers, deterministic); each summary folds in the previous one and the
# facts of its own layer, and this lossy summariser drops a fact now and then.
KEPT = [
    {1, 2, 4, 6, 8, 9},  # turns 1-9: drops 5
    {1, 2, 4, 6, 8, 9, 10, 12, 13, 15, 16},  # turns 10-17: drops 14
    {1, 2, 4, 6, 9, 10, 12, 13, 15, 16, 18, 20},  # turns 18-24: drops 8
    {1, 2, 4, 6, 9, 10, 12, 13, 15, 16, 18, 20},
    {1, 2, 4, 9, 10, 12, 13, 15, 16, 18, 20},  # drops 6
    {1, 2, 4, 9, 10, 12, 13, 15, 16, 18, 20},
    {1, 2, 4, 9, 10, 12, 13, 16, 18, 20},  # drops 15
    {1, 2, 4, 9, 10, 12, 13, 16, 18, 20},
]


def reply(turn: int) -> str:
    if turn in MEMORIES:
        scope = MEMORIES[turn]
        marker = f'<memory scope="{scope}" key="fact.{turn:02d}">{FACTS[turn]}</memory>'
        return f"Understood, I will keep that in mind. {marker}"
    if turn <= 20:
        return "Understood, noted."
    return f"Here is the status update number {turn}: all checks are green so far."


def summary(kept: set[int]) -> str:
    facts = "; ".join(FACTS[n] for n in sorted(kept))
    return f"The user introduced the project. Facts the user stated: {facts}. No open tasks."


async def test_memories_and_the_latest_request_survive_two_compactions(
    workspace: Path, open_chat: OpenChat
) -> None:
    script = [{"text": reply(t), "chunk": 64} for t in range(1, 61)]
    script += [{"purpose": "summary", "text": summary(k)} for k in KEPT]
    write_workspace(workspace, script)
    chat = await open_chat()
    approved: list[str] = []
    last = ""
    for turn in range(1, 61):
        last = f"Fact: {FACTS[turn]}." if turn <= 20 else f"What is the status now? ({turn})"
        _events, outcome = await chat.send(last)
        assert outcome.failure is None
        for proposal in outcome.proposals:
            record = await chat.facade.memory.approve(proposal.id)
            approved.append(record.id)
    assert len(approved) == 5

    summaries = await chat.facade.context.summaries(chat.name)
    texts = [e.payload.text for e in summaries if isinstance(e.payload, CompactionSummary)]
    assert len(texts) >= 2
    assert not any(e.payload.fallback for e in summaries)  # type: ignore[union-attr]

    trace = await chat.facade.context.trace(chat.name)
    assert trace is not None and trace.turn == 60
    included = {i.ref for i in trace.items if i.included}
    for memory_id in approved:
        assert any(ref.startswith(f"mem:{memory_id}@") for ref in included)
    assert [i.included for i in trace.items if i.source is ContextSource.PROMPT] == [True]
    messages = await chat.facade.context.replay(chat.name, 60)
    assert messages[-1].content == last
    memory_block = next(m.content for m in messages if m.content.startswith("<kairox:memories>"))
    assert all(FACTS[n] in memory_block for n in MEMORIES)

    others = [n for n in FACTS if n not in MEMORIES]
    surviving = [n for n in others if FACTS[n] in texts[-1]]
    print(
        f"\nretention: {len(texts)} compactions; {len(surviving)} of the 15 facts not kept as "
        f"memories survive in the final summary: {surviving}"
    )
    assert len(texts) == len(KEPT)
    assert len(surviving) == 10
    assert surviving == sorted(KEPT[-1])
