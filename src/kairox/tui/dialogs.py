"""Small modal dialogs: edit a memory body, and read a memory's version history.

They return plain values to their caller and never touch the facade themselves.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from kairox.core.clock import isoformat
from kairox.core.records import MemoryVersion, version_label
from kairox.core.terminal import visible

MODAL_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 80%;
    max-width: 100;
    height: auto;
    max-height: 80%;
    border: thick $accent;
    background: $surface;
    padding: 1 2;
}}
{name} Label {{ margin-bottom: 1; }}
"""


class EditBodyScreen(ModalScreen[str | None]):
    """Edit a body; enter returns the new text, escape returns None."""

    DEFAULT_CSS = MODAL_CSS.format(name="EditBodyScreen")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, markup=False)
            yield Input(self.body, id="edit-body", select_on_focus=False)
            yield Label("enter saves · esc cancels", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def history_text(versions: list[MemoryVersion]) -> Text:
    text = Text()
    for v in versions:
        if text:
            text.append("\n")
        undone = " (undone)" if v.undone else ""
        label = version_label(v.version, v.status)
        if label != "-":  # a proposal is no version of the memory
            text.append(f"{label} ", style="bold")
        text.append(f"{v.action}{undone} ", style="cyan")
        text.append(f"{v.status.value} by {v.actor.value} ", style="dim")
        text.append(f"{isoformat(v.changed_at)}\n", style="dim")
        text.append(f"   {visible(v.body)}")
        if v.reason:
            text.append("\n   reason: ", style="dim")
            text.append(visible(v.reason, one_line=True), style="red")
    return text or Text("no history", style="dim")


class HistoryScreen(ModalScreen[None]):
    """A memory's versions, oldest first."""

    DEFAULT_CSS = MODAL_CSS.format(name="HistoryScreen")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,h", "close", "Close"),
    ]

    def __init__(self, title: str, versions: list[MemoryVersion]) -> None:
        super().__init__()
        self.title_text = title
        self.versions = versions

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, markup=False)
            yield Static(history_text(self.versions), id="history")
            yield Label("esc closes", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)
