"""Replay rebuilds a turn's request from the log alone, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from assembly_support import REGISTRY, SESSION, Home, hit, words

from kairox.context.assembler import Assembly, AssemblyInput, ContextAssembler, Quotas
from kairox.context.history import load_history
from kairox.context.replay import item_text, load_assembly, replay
from kairox.context.windows import Budget
from kairox.core.errors import NotFound
from kairox.core.events import ContextAssembled
from kairox.core.messages import ChatMessage
from kairox.core.types import Actor, ContextSource


def dump(messages: tuple[ChatMessage, ...]) -> str:
    return json.dumps([m.model_dump(mode="json") for m in messages], ensure_ascii=False)


def turn(
    home: Home,
    prompt: str,
    *,
    size: int = 3000,
    with_seq: bool = True,
    quotas: Quotas | None = None,
    workspace: int = 0,
) -> Assembly:
    """Record the prompt, assemble as the runtime does, and append the trace."""
    event = home.user(prompt)
    history = load_history(home.events, SESSION, home.tokenizer, until_seq=event.seq - 1)
    assembly = ContextAssembler(
        home.tokenizer, Budget(window=size + 500, headroom=500, budget=size), quotas=quotas
    ).assemble(
        AssemblyInput(
            system_prompt="You are Kairox.",
            instructions="Answer in English.",
            memories=home.accepted(),
            workspace_hits=[
                hit(
                    "workspace:notes.md",
                    str(n),
                    words(400, f"n{n}_"),
                    path="notes.md",
                    start_line=1,
                    end_line=9,
                )
                for n in range(workspace)
            ],
            kb_hits=[hit("kb:handbook", "h1", "Deploys happen on Tuesdays.", title="Deploys")],
            history=history,
            prompt=prompt,
            turn=home.turn,
            model="openai:gpt-4o",
            prompt_seq=event.seq if with_seq else None,
        )
    )
    home.append(assembly.trace)
    return assembly


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path, REGISTRY.get("o200k_base"))
    for n in range(30):
        h.user(words(40, f"q{n}_"))
        h.tool(words(80, f"r{n}_"))
        h.assistant(words(60, f"a{n}_"))
    return h


def test_replay_equals_the_original_with_truncation_memories_and_hits(home: Home) -> None:
    home.memory("editor.font", "JetBrains Mono")
    home.memory("notes.long", words(900, "long"))
    assembly = turn(
        home, "Which font do I use?", quotas=Quotas(memory=200, workspace=300), workspace=2
    )
    trace = assembly.trace
    # (a cut history item is replayed in test_replay_uses_the_recorded_tokenizer: only the
    # latest exchange is ever cut, and then no room is left for retrieval)
    assert any(i.truncated and i.source is ContextSource.WORKSPACE for i in trace.items)
    replayed = replay(home.events, home.memories, SESSION, home.turn, REGISTRY)
    assert dump(replayed) == dump(assembly.messages)


def test_replay_equals_the_original_with_memories_over_the_budget(home: Home) -> None:
    home.memory("editor.font", "JetBrains Mono")
    home.memory("notes.long", words(4000, "long"))
    assembly = turn(home, "Which font do I use?", quotas=Quotas(memory=200))
    trace = assembly.trace
    assert any(i.truncated and i.source is ContextSource.MEMORY for i in trace.items)
    replayed = replay(home.events, home.memories, SESSION, home.turn, REGISTRY)
    assert dump(replayed) == dump(assembly.messages)


def test_replay_uses_the_memory_version_the_turn_saw(home: Home) -> None:
    memory = home.memory("editor.font", "JetBrains Mono")
    assembly = turn(home, "Font?")
    recorded_turn = home.turn
    home.memories.edit(memory.id, "Fira Code", actor=Actor.USER)
    turn(home, "And now?")
    home.memories.delete(memory.id, actor=Actor.USER)
    replayed = replay(home.events, home.memories, SESSION, recorded_turn, REGISTRY)
    assert dump(replayed) == dump(assembly.messages)
    assert "JetBrains Mono" in replayed[1].content and "Fira Code" not in replayed[1].content


def test_replay_finds_the_prompt_by_turn_when_the_assembler_had_no_seq(home: Home) -> None:
    assembly = turn(home, "no seq given", with_seq=False)
    assert assembly.trace.items[-1].ref == "prompt"
    replayed = replay(home.events, home.memories, SESSION, home.turn, REGISTRY)
    assert dump(replayed) == dump(assembly.messages)


def test_replay_of_a_summarised_session(home: Home) -> None:
    home.summary(1, 60, "The first twenty turns were about fonts.")
    assembly = turn(home, "What were the first turns about?", size=12_000)
    assert assembly.trace.by_source[ContextSource.SUMMARY] > 0
    replayed = replay(home.events, home.memories, SESSION, home.turn, REGISTRY)
    assert dump(replayed) == dump(assembly.messages)


def test_replay_uses_the_recorded_tokenizer(tmp_path: Path) -> None:
    home = Home(tmp_path, REGISTRY.get("cl100k_base"))
    for n in range(20):
        home.user(words(50, f"x{n}_"))
    home.user(words(900, "big_"))  # the latest exchange does not fit whole: it is cut
    assembly = turn(home, "cl100k please", size=600)
    assert assembly.trace.tokenizer == "cl100k_base"
    assert any(i.truncated and i.source is ContextSource.HISTORY for i in assembly.trace.items)
    replayed = replay(home.events, home.memories, SESSION, home.turn, REGISTRY)
    assert dump(replayed) == dump(assembly.messages)


def test_the_last_assembly_of_a_turn_wins_unless_a_seq_is_given(home: Home) -> None:
    first = turn(home, "first")
    first_seq = home.events.last_seq()
    home.append(first.trace.model_copy(update={"system_prompt": "changed"}))
    latest = replay(home.events, home.memories, SESSION, home.turn, REGISTRY)
    assert latest[0].content == "changed"
    pinned = replay(
        home.events, home.memories, SESSION, home.turn, REGISTRY, assembly_seq=first_seq
    )
    assert dump(pinned) == dump(first.messages)


def test_load_assembly_and_missing_turns(home: Home) -> None:
    with pytest.raises(NotFound):
        load_assembly(home.events, SESSION)
    turn(home, "one")
    turn(home, "two")
    latest = load_assembly(home.events, SESSION)
    assert isinstance(latest.payload, ContextAssembled) and latest.payload.turn == home.turn
    with pytest.raises(NotFound):
        replay(home.events, home.memories, SESSION, 999, REGISTRY)
    with pytest.raises(NotFound):
        load_assembly(home.events, "other-session", seq=latest.seq)


def test_every_item_expands_to_the_text_the_model_saw(home: Home) -> None:
    home.memory("editor.font", "JetBrains Mono")
    home.memory("notes.long", words(900, "long"))
    assembly = turn(home, "Which font?", quotas=Quotas(memory=200, workspace=300), workspace=2)
    stored = load_assembly(home.events, SESSION)
    sent = "\n".join(m.content for m in assembly.messages)
    refs = {i.source: i.ref for i in assembly.trace.items if i.included}
    for item in assembly.trace.items:
        text = item_text(home.events, home.memories, stored, item.ref, home.tokenizer)
        assert text.strip()
        if item.included and item.source in (ContextSource.MEMORY, ContextSource.WORKSPACE):
            assert text in sent  # cut exactly as it was cut in the request
        if not item.included and item.source is ContextSource.WORKSPACE:
            assert "not recorded" in text
    assert "JetBrains Mono" in item_text(
        home.events, home.memories, stored, refs[ContextSource.MEMORY], home.tokenizer
    ) or any(
        "JetBrains Mono" in item_text(home.events, home.memories, stored, i.ref, home.tokenizer)
        for i in assembly.trace.items
        if i.source is ContextSource.MEMORY
    )
    prompt = item_text(
        home.events, home.memories, stored, refs[ContextSource.PROMPT], home.tokenizer
    )
    assert prompt == "Which font?"
    system = item_text(
        home.events, home.memories, stored, refs[ContextSource.SYSTEM], home.tokenizer
    )
    assert system == assembly.messages[0].content
    history = item_text(
        home.events, home.memories, stored, refs[ContextSource.HISTORY], home.tokenizer
    )
    assert history.startswith("[")
    with pytest.raises(NotFound):
        item_text(home.events, home.memories, stored, "mem:nope@v1", home.tokenizer)
