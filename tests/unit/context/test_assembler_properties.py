"""Laws of assembly, over generated sessions stored in a real SQLite home.

The real o200k/cl100k tokenizers count the final rendered request. For every session:
the request fits the budget; with enough history it uses at least 95% of it; the system prompt
and the prompt are there verbatim; no accepted memory is dropped while older history is in;
tool pairs are never split; and replay from the log equals the request byte for byte.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from assembly_support import REGISTRY, SESSION, Home, hit, pairs_intact
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kairox.context.assembler import OUTRANKED, AssemblyInput, ContextAssembler, Quotas
from kairox.context.history import load_history
from kairox.context.replay import replay
from kairox.context.windows import Budget
from kairox.core.errors import ContextOverflow
from kairox.core.messages import ChatMessage
from kairox.core.types import ContextSource, MemoryScope

VOCAB = [
    "alpha", "beta", "the", "and", "κόσμε", "日本語", "🙂", "x=1;", "{}", "()", "\n", "\t", "  ",
    "ünïcödé", "0123", "<kairox:memories>", "</kairox:passage>", "</KAIROX:workspace>", "[…]",
    "'s", "--", "https://example.com/a?b=c",
]  # fmt: skip

small_text = st.one_of(
    st.lists(st.sampled_from(VOCAB), max_size=80).map(" ".join),
    st.text(max_size=120),
)
big_text = st.lists(st.sampled_from(VOCAB), min_size=150, max_size=900).map(" ".join)
any_text = st.one_of(small_text, big_text)
body_text = any_text.filter(lambda t: bool(t.strip()))

KINDS = ["user"] * 3 + ["assistant"] * 3 + ["tool"] * 3 + ["memory"] * 2 + ["summary"]
action = st.sampled_from(KINDS).flatmap(
    lambda kind: st.tuples(st.just(kind), body_text if kind == "memory" else any_text)
)


@dataclass(frozen=True)
class Scenario:
    tokenizer: str
    budget: int
    actions: list[tuple[str, str]]
    system: str
    prompt: str
    workspace: list[str]
    kb: list[str]
    memory_quota: float | int
    prompt_seq: bool


scenarios = st.builds(
    Scenario,
    tokenizer=st.sampled_from(["o200k_base", "cl100k_base"]),
    budget=st.integers(min_value=1000, max_value=4000),
    actions=st.lists(action, min_size=10, max_size=60),
    system=small_text,
    prompt=small_text,
    workspace=st.lists(any_text, max_size=4),
    kb=st.lists(any_text, max_size=3),
    memory_quota=st.sampled_from([0.02, 0.1, 0.25, 0.6, 150]),
    prompt_seq=st.booleans(),
)


def dump(messages: tuple[ChatMessage, ...]) -> str:
    return json.dumps([m.model_dump(mode="json") for m in messages], ensure_ascii=False)


def build(home: Home, scenario: Scenario) -> None:
    first_history: int | None = None
    last_history: int | None = None
    last_summary: int | None = None
    for n, (kind, text) in enumerate(scenario.actions):
        if kind == "memory":
            if n % 3 == 0:
                home.memory(None, text, scope=MemoryScope.SESSION)
            else:
                home.memory(f"key.{n}", text)
            continue
        if kind == "summary":
            if first_history is not None and last_history is not None:
                event = home.summary(first_history, last_history, text, previous=last_summary)
                last_summary = event.seq
            continue
        if kind == "user":
            event = home.user(text)
        elif kind == "assistant":
            event = home.assistant(text)
        else:
            event = home.tool(text)
        first_history = first_history or event.seq
        last_history = event.seq


@settings(
    max_examples=70,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario=scenarios)
def test_assembly_laws_hold_and_replay_is_exact(scenario: Scenario) -> None:
    tok = REGISTRY.get(scenario.tokenizer)
    budget = Budget(window=scenario.budget + 500, headroom=500, budget=scenario.budget)
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp), tok)
        build(home, scenario)
        prompt_event = home.user(scenario.prompt)
        history = load_history(home.events, SESSION, tok, until_seq=prompt_event.seq - 1)
        memories = home.accepted()
        inp = AssemblyInput(
            system_prompt=scenario.system,
            instructions="",
            memories=memories,
            workspace_hits=[
                hit(f"workspace:f{n}.py", str(n), t, path=f"f{n}.py")
                for n, t in enumerate(scenario.workspace)
            ],
            kb_hits=[hit("kb:docs", f"d{n}", t) for n, t in enumerate(scenario.kb)],
            history=history,
            prompt=scenario.prompt,
            turn=home.turn,
            model="openai:gpt-4o",
            prompt_seq=prompt_event.seq if scenario.prompt_seq else None,
        )
        assembler = ContextAssembler(tok, budget, quotas=Quotas(memory=scenario.memory_quota))
        try:
            assembly = assembler.assemble(inp)
        except ContextOverflow as overflow:
            irreducible = [
                ChatMessage(role="system", content=scenario.system),
                ChatMessage(role="user", content=scenario.prompt),
            ]
            assert tok.count_messages(irreducible) == overflow.required > budget.budget
            event("overflow")
            return
        messages, trace = assembly.messages, assembly.trace

        # The request never exceeds the budget; the trace states its exact size.
        assert tok.count_messages(messages) == trace.used <= budget.budget
        assert sum(trace.by_source.values()) == trace.used

        # With enough history, history stops only at what would not fit: older history goes
        # by whole exchanges, so the exchange at the cut did not fit beside what went in.
        if sum(item.tokens for item in history) >= budget.budget:
            event("enough history")
            boundary = [
                i
                for i in trace.items
                if i.source is ContextSource.HISTORY and i.reason == "does not fit"
            ]
            if boundary:
                assert trace.used + sum(i.tokens for i in boundary) > budget.budget
        for label, happened in (
            ("an item truncated", any(i.truncated for i in trace.items)),
            ("a summary included", trace.by_source[ContextSource.SUMMARY] > 0),
            (
                "a memory left out",
                any(i.source is ContextSource.MEMORY and not i.included for i in trace.items),
            ),
            ("a tool pair included", any(m.role == "tool" for m in messages)),
        ):
            if happened:
                event(label)

        # System prompt and prompt, verbatim.
        assert messages[0].role == "system" and messages[0].content == scenario.system
        assert messages[-1] == ChatMessage(role="user", content=scenario.prompt)

        # No accepted memory is dropped while history older than the latest exchange is in.
        raw = [h for h in history if h.kind != "summary"]
        latest = max((n for n, h in enumerate(raw) if h.kind == "user"), default=0)
        older = {h.ref for h in raw[:latest]}
        included = {i.ref for i in trace.items if i.included}
        if any(i.source is ContextSource.MEMORY and i.reason == OUTRANKED for i in trace.items):
            assert not older & included, trace.items

        # Tool pairs are never split.
        assert pairs_intact(messages)

        # Replay from the log alone equals the request, byte for byte.
        home.append(trace)
        replayed = replay(home.events, home.memories, SESSION, home.turn, REGISTRY)
        assert dump(replayed) == dump(messages)
