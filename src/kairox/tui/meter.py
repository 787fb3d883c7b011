"""The context meter: the last turn's used/budget tokens, split by source.

It turns a warning colour as the usage nears the compaction threshold, so the user sees a
compaction coming. It shows what the ``ContextAssembled`` event says, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual.widgets import Static

from kairox.core.events import ContextAssembled
from kairox.core.types import ContextSource

DEFAULT_THRESHOLD = 0.85
WARN_MARGIN = 0.10
BAR_WIDTH = 20
MAX_WIDTH = 98  # the meter line, inside its padding, on a 100-column terminal
SHORT_NAMES: dict[ContextSource, str] = {
    ContextSource.SYSTEM: "sys",
    ContextSource.MEMORY: "mem",
    ContextSource.WORKSPACE: "ws",
    ContextSource.KNOWLEDGE_BASE: "kb",
    ContextSource.RECALL: "rec",
    ContextSource.SUMMARY: "sum",
    ContextSource.HISTORY: "hist",
    ContextSource.PROMPT: "prompt",
}
Level = Literal["ok", "warn", "over"]

SOURCE_COLOURS: dict[ContextSource, str] = {
    ContextSource.SYSTEM: "grey62",
    ContextSource.MEMORY: "magenta",
    ContextSource.WORKSPACE: "cyan",
    ContextSource.KNOWLEDGE_BASE: "blue",
    ContextSource.RECALL: "bright_green",
    ContextSource.SUMMARY: "yellow",
    ContextSource.HISTORY: "green",
    ContextSource.PROMPT: "white",
}


@dataclass(frozen=True)
class MeterReading:
    used: int
    budget: int
    by_source: tuple[tuple[ContextSource, int], ...]
    threshold: float

    @property
    def ratio(self) -> float:
        return self.used / self.budget if self.budget > 0 else 1.0

    @property
    def level(self) -> Level:
        if self.ratio >= self.threshold:
            return "over"
        if self.ratio >= self.threshold - WARN_MARGIN:
            return "warn"
        return "ok"


def reading_of(trace: ContextAssembled, threshold: float) -> MeterReading:
    order = list(ContextSource)
    parts = sorted(
        ((source, tokens) for source, tokens in trace.by_source.items() if tokens > 0),
        key=lambda pair: order.index(pair[0]),
    )
    return MeterReading(trace.used, trace.budget, tuple(parts), threshold)


def render_reading(reading: MeterReading) -> Text:
    colour = {"ok": "green", "warn": "yellow", "over": "red"}[reading.level]
    text = Text("context ", style="bold")
    text.append(f"{reading.used:,}/{reading.budget:,}", style=f"bold {colour}")
    text.append(f" ({reading.ratio:.0%}) ", style=colour)
    filled = 0
    for source, tokens in reading.by_source:
        cells = round(BAR_WIDTH * tokens / reading.budget) if reading.budget else 0
        cells = min(cells, BAR_WIDTH - filled)
        text.append("█" * cells, style=SOURCE_COLOURS[source])
        filled += cells
    text.append("░" * (BAR_WIDTH - filled), style="grey30")
    text.append(" ")
    tail = f"  compaction at {reading.threshold:.0%}" if reading.level != "ok" else ""
    parts = [f"{SHORT_NAMES[source]} {_compact(tokens)}" for source, tokens in reading.by_source]
    room = MAX_WIDTH - len(text.plain) - len(tail)
    legend = " · ".join(parts)
    if len(legend) > room:
        legend = legend[: max(room - 1, 0)] + "…"
    text.append(legend, style="dim")
    if tail:
        text.append(tail, style=colour)
    return text


def _compact(tokens: int) -> str:
    """12345 -> 12.3k, so the legend stays short on big windows."""
    if tokens >= 100_000:
        return f"{tokens // 1000}k"
    if tokens >= 10_000:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens:,}"


class ContextMeter(Static):
    DEFAULT_CSS = """
    ContextMeter { height: 1; padding: 0 1; background: $boost; }
    ContextMeter.-warn { background: $warning 20%; }
    ContextMeter.-over { background: $error 25%; }
    """

    def __init__(self, *, threshold: float = DEFAULT_THRESHOLD, id: str | None = None) -> None:
        super().__init__(Text("context: no turn yet", style="dim"), id=id)
        self.threshold = threshold
        self.reading: MeterReading | None = None

    def show_trace(self, trace: ContextAssembled) -> None:
        self.reading = reading_of(trace, self.threshold)
        self.set_class(self.reading.level == "warn", "-warn")
        self.set_class(self.reading.level == "over", "-over")
        self.update(render_reading(self.reading))
