"""The TUI's lines for a cut reply, a failed extraction and a model notice."""

from __future__ import annotations

from kairox.core.events import (
    AssistantMessageCompleted,
    MemoryExtractionFailed,
    ModelNotice,
    UserMessageAdded,
)
from kairox.tui.session_events import model_line


def test_model_lines() -> None:
    looped = AssistantMessageCompleted(turn=1, text="x", model="local", finish_reason="loop")
    assert "repeating" in (model_line(looped) or "")
    cut = AssistantMessageCompleted(turn=1, text="x", model="local", finish_reason="length")
    assert "length limit" in (model_line(cut) or "")
    assert model_line(AssistantMessageCompleted(turn=1, text="x", model="local")) is None
    failed = MemoryExtractionFailed(turn=2, reason="model down")
    assert model_line(failed) == "memory extraction failed: model down"
    notice = ModelNotice(turn=1, model="local", text="SmolLM2-135M is a demo model")
    assert model_line(notice) == "SmolLM2-135M is a demo model"
    assert model_line(UserMessageAdded(turn=1, text="hi")) is None
