"""``kairox compact --session NAME`` through the real command group."""

from __future__ import annotations

import json
from pathlib import Path

from compaction_chat import replies, summaries, write_workspace

from helpers import invoke


def test_compact_command_summarises_and_reports(workspace: Path) -> None:
    write_workspace(workspace, [*replies(3), *summaries("Two greetings were exchanged.")])
    for text in ("hello", "hello again"):
        code, _ = invoke("send", "--workspace", str(workspace), "--session", "w", text)
        assert code == 0
    code, out = invoke("compact", "--workspace", str(workspace), "--session", "w", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["session"] == "w" and data["outcome"] == "summarised"
    assert data["tokens_after"] < data["tokens_before"]
    code, out = invoke("events", "--workspace", str(workspace), "--session", "w", "--json")
    kinds = [e["type"] for e in json.loads(out)]
    assert kinds[-3:] == [
        "ModelCallStarted",
        "CompactionSummary",
        "ContextCompactionCompleted",
    ]
    assert kinds[-4] == "ContextCompactionStarted"


def test_compact_command_says_why_it_skipped(workspace: Path) -> None:
    write_workspace(workspace, replies(1))
    assert invoke("send", "--workspace", str(workspace), "--session", "w", "hi")[0] == 0
    code, out = invoke("compact", "--workspace", str(workspace), "--session", "w")
    assert code == 0
    assert (
        out.strip() == "w: compaction skipped: nothing to compact: only the latest turn is "
        "not summarised yet"
    )


def test_the_demo_includes_a_compaction() -> None:
    code, out = invoke("demo")
    assert code == 0, out
    assert "6. compaction summarises the older turns (raw events stay)" in out
    assert "demo: events 2-" in out and " summarised: " in out
    assert "+ summary: seq:" in out


def test_compact_command_exits_non_zero_when_the_summary_cannot_be_used(workspace: Path) -> None:
    failing = [{"purpose": "summary", "error": "model overloaded"}] * 3
    write_workspace(workspace, [*replies(3), *failing])
    for text in ("hello", "hello again"):
        assert invoke("send", "--workspace", str(workspace), "--session", "w", text)[0] == 0
    code, out = invoke("compact", "--workspace", str(workspace), "--session", "w", "--json")
    assert code == 1, out
    data = json.loads(out)
    assert data["outcome"] == "failed" and data["summary_seq"] is None
    assert "the context was left as it was" in data["reason"]
    code, out = invoke("events", "--workspace", str(workspace), "--session", "w", "--json")
    kinds = [e["type"] for e in json.loads(out)]
    assert "CompactionSummary" not in kinds and kinds[-1] == "ContextCompactionFailed"
