"""The `kairox context` views of a trace: the JSON document and the terminal bar chart."""

from __future__ import annotations

import dataclasses
import json

from assembly_support import REGISTRY, history_item, hit, make_input, memory_record, words

from kairox.context.assembler import ContextAssembler, Quotas
from kairox.context.trace_view import EMPTY, FULL, bar_chart, trace_json
from kairox.context.windows import Budget
from kairox.core.events import ContextAssembled, TraceItem, payload_from_json, payload_to_json
from kairox.core.types import ContextSource

TOK = REGISTRY.get("o200k_base")


def sample() -> ContextAssembled:
    history = [history_item(n, words(60), TOK, at=n) for n in range(1, 30)]
    memories = [memory_record("editor.font", "JetBrains Mono", at=100)]
    workspace = [hit("workspace:a.py", str(n), words(200)) for n in range(4)]
    return (
        ContextAssembler(
            TOK, Budget(window=2500, headroom=500, budget=2000), quotas=Quotas(workspace=0.2)
        )
        .assemble(make_input(history=history, memories=memories, workspace=workspace, turn=3))
        .trace
    )


def test_json_holds_the_documented_fields_and_survives_the_log() -> None:
    trace = payload_from_json(payload_to_json(sample()))  # as read back from the event log
    assert isinstance(trace, ContextAssembled)
    doc = trace_json(trace)
    assert json.loads(json.dumps(doc)) == doc
    assert {"budget", "used", "tokenizer", "estimated", "by_source", "items"} <= doc.keys()
    assert doc["budget"] == 2000 and doc["used"] == trace.used and doc["free"] == 2000 - trace.used
    assert doc["tokenizer"] == "o200k_base" and doc["estimated"] is False
    assert list(doc["by_source"]) == [
        "system",
        "memory",
        "workspace",
        "knowledge_base",
        "recall",
        "summary",
        "history",
        "prompt",
    ]
    assert sum(doc["by_source"].values()) == doc["used"]
    refs = [i["ref"] for i in doc["items"]]
    assert refs[0] == "system" and refs[1] == "mem:mem_editor.font@v1"
    assert "chunk:workspace:a.py#0" in refs and "seq:29" in refs and refs[-1] == "prompt"
    left_out = [i for i in doc["items"] if not i["included"]]
    assert {i["reason"] for i in left_out} >= {"over workspace quota", "older than the history cut"}
    truncated = [i for i in doc["items"] if i["truncated"]]
    assert truncated and all(i["dropped_tokens"] for i in truncated)


def test_bar_chart_scales_each_source_to_the_budget() -> None:
    trace = sample()
    chart = bar_chart(trace, width=40)
    lines = chart.splitlines()
    assert "budget 2,000" in lines[1] and f"used {trace.used:,}" in lines[1]
    history_row = next(line for line in lines if line.startswith("history"))
    expected = round(trace.by_source[ContextSource.HISTORY] * 40 / 2000)
    assert history_row.count(FULL) == expected
    assert next(line for line in lines if line.startswith("summary")).count(FULL) == 0
    assert next(line for line in lines if line.startswith("prompt")).count(FULL) == 1  # tiny > 0
    assert any(line.startswith("free") for line in lines)
    assert "left out" in chart and "older than the history cut" in chart


def test_bar_chart_shows_free_space_estimates_and_retrieval_errors() -> None:
    trace = ContextAssembled(
        turn=1,
        model="local",
        tokenizer="estimate",
        estimated=True,
        window=1000,
        headroom=200,
        budget=800,
        used=200,
        by_source={ContextSource.SYSTEM: 100, ContextSource.PROMPT: 100},
        items=(TraceItem(source=ContextSource.SYSTEM, ref="system", tokens=100, included=True),),
        system_prompt="s",
        retrieval_errors=("kb:docs: connection refused",),
    )
    chart = bar_chart(trace, width=20)
    assert "(estimated counts)" in chart
    free = next(line for line in chart.splitlines() if line.startswith("free"))
    assert free.count(EMPTY) == 15 and "600" in free
    assert "retrieval error: kb:docs: connection refused" in chart
    assert trace_json(trace)["by_source"]["memory"] == 0


def _with_floor(scores: list[float], floor: float) -> ContextAssembled:
    workspace = [hit("workspace:a.py", str(n), words(20), score=s) for n, s in enumerate(scores)]
    inp = dataclasses.replace(make_input(workspace=workspace), relevance_floor=floor)
    return ContextAssembler(TOK, Budget(window=8000, headroom=500, budget=7500)).assemble(inp).trace


def test_the_trace_states_the_floor_also_when_no_hit_fell_under_it() -> None:
    none_fell = _with_floor([0.9, 0.8], 0.35)
    assert "relevance floor 0.35: 0 of 2 retrieval hits fell under it" in bar_chart(none_fell)
    doc = trace_json(none_fell)
    assert doc["relevance_floor"] == 0.35 and doc["below_floor"] == 0
    one_fell = _with_floor([0.9, 0.1], 0.35)
    assert "relevance floor 0.35: 1 of 2 retrieval hits fell under it" in bar_chart(one_fell)
    assert trace_json(one_fell)["below_floor"] == 1
    no_retrieval = _with_floor([], 0.0)
    assert "relevance floor" not in bar_chart(no_retrieval)
