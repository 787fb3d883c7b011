"""The chat stream: user messages, replies that stream in, failures, and proposal cards.

The view only renders what it is told; the chat screen feeds it from the session's history when
the app starts, then from the store's ordered event stream (each event once).
"""

from __future__ import annotations

from typing import TypeVar

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from kairox.core.events import MemoryProposed
from kairox.core.records import MemoryRecord
from kairox.core.terminal import visible
from kairox.tui.cards import ProposalCard

W = TypeVar("W", bound=Static)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPIN_S = 0.1


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage { margin: 1 0 0 0; padding: 0 1; color: $text; background: $primary 15%; }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Text.assemble(("you ", "bold cyan"), text))
        self.text = text


class AssistantMessage(Static):
    """A reply; it grows as deltas arrive and is marked when the turn fails."""

    DEFAULT_CSS = """
    AssistantMessage { padding: 0 1; }
    AssistantMessage.-streaming { color: $text-muted; }
    AssistantMessage.-failed { color: $text-muted; text-style: italic; }
    """

    def __init__(self, text: str = "", *, streaming: bool = False) -> None:
        super().__init__(markup=False)
        self.text = text
        self.waiting: str | None = None  # what the spinner says until the first token
        self._frame = 0
        self.set_class(streaming, "-streaming")

    def on_mount(self) -> None:
        self._render_text()
        self.set_interval(SPIN_S, self._spin)

    def wait(self, label: str) -> None:
        """Spin with ``label`` (e.g. "loading model…") until the first token or the end."""
        self.waiting = label
        self._render_text()

    def _spin(self) -> None:
        if self.waiting is not None and not self.text:
            self._frame += 1
            self._render_text()

    def append(self, delta: str) -> None:
        self.text += delta
        self.waiting = None
        self._render_text()

    def finish(self, failure: str | None = None) -> None:
        self.waiting = None
        self.remove_class("-streaming")
        self.set_class(failure is not None, "-failed")
        self._render_text()

    def _render_text(self) -> None:
        if self.waiting is not None and not self.text:
            frame = SPINNER[self._frame % len(SPINNER)]
            self.update(
                Text.assemble(("kairox ", "bold green"), (f"{frame} {self.waiting}", "dim"))
            )
            return
        body = self.text or ("…" if self.has_class("-streaming") else "")
        if self.has_class("-failed") and not self.text:
            body = "(no reply)"
        self.update(Text.assemble(("kairox ", "bold green"), visible(body)))


class EventLine(Static):
    """A one-line marker in the stream, such as a failed turn or a compaction."""

    DEFAULT_CSS = """
    EventLine { padding: 0 1; color: $text-muted; text-style: italic; }
    EventLine.-error { color: $error; }
    """

    def __init__(self, text: str, *, error: bool = False) -> None:
        super().__init__(visible(text), markup=False)
        self.text = text
        self.set_class(error, "-error")


class ChatView(VerticalScroll, can_focus=False):
    DEFAULT_CSS = """
    ChatView { height: 1fr; padding: 0 1; }
    """

    async def add_user(self, text: str) -> UserMessage:
        return await self._add(UserMessage(text))

    async def start_reply(self) -> AssistantMessage:
        return await self._add(AssistantMessage(streaming=True))

    async def add_reply(self, text: str) -> AssistantMessage:
        return await self._add(AssistantMessage(text))

    async def add_line(self, text: str, *, error: bool = False) -> EventLine:
        return await self._add(EventLine(text, error=error))

    async def add_card(self, proposal: MemoryProposed, record: MemoryRecord) -> ProposalCard:
        return await self._add(ProposalCard(proposal, record))

    def cards(self) -> list[ProposalCard]:
        return list(self.query(ProposalCard))

    def transcript(self) -> str:
        """The visible text of the stream, for tests and for copying."""
        parts: list[str] = []
        for child in self.children:
            if isinstance(child, UserMessage):
                parts.append(f"you {child.text}")
            elif isinstance(child, AssistantMessage):
                parts.append(f"kairox {child.text}")
            elif isinstance(child, EventLine):
                parts.append(child.text)
            elif isinstance(child, ProposalCard):
                parts.append(f"[{child.record.status.value}] {child.record.body}")
        return "\n".join(parts)

    async def _add(self, widget: W) -> W:
        await self.mount(widget)
        self.scroll_end(animate=False)
        return widget
