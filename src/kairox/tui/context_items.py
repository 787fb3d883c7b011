"""What the model saw: every item of a turn's context, each expandable to its text.

The trace panel and the meter show token counts; this screen lists the items of the last
assembled turn, each by a snippet of its text (a memory by its scope and key), and, when one is
expanded, asks the facade (``facade.context.expand``, the call the web inspector uses too) for the
exact text that entered the request.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Tree

from kairox.core.events import ContextAssembled, TraceItem
from kairox.core.terminal import visible
from kairox.core.types import ContextSource
from kairox.tui.dialogs import MODAL_CSS
from kairox.tui.notices import error_line

if TYPE_CHECKING:
    from kairox.app import AppFacade

MAX_LINES = 400
SNIPPET = 60
_ROLE_HEAD = re.compile(r"\[(?:system|user|assistant|tool)[^\]\n]*\]\s*")


def snippet(text: str, width: int = SNIPPET) -> str:
    """The start of an item's text on one line, without the role headers of its messages."""
    flat = " ".join(_ROLE_HEAD.sub(" ", text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def item_name(item: TraceItem, text: str | None) -> str:
    """What a person recognises an item by: a memory's scope and key, else its text."""
    if item.source is ContextSource.MEMORY or text is None or item.source is ContextSource.SYSTEM:
        return item.label
    return f"“{snippet(text)}”"


def item_label(item: TraceItem, text: str | None = None) -> Text:
    mark = "+" if item.included else "-"
    label = Text(f"{mark} {item.source.value:<14} ", style="bold" if item.included else "dim")
    label.append(item_name(item, text), style="cyan" if item.included else "dim")
    label.append(f"  {item.tokens:,} tok", style="dim")
    if item.truncated:
        label.append(" truncated", style="yellow")
    if item.reason:
        label.append(f" ({item.reason})", style="dim")
    return label


class ContextItemsScreen(ModalScreen[None]):
    """The items of a turn's assembly; enter expands one to its text, esc closes."""

    DEFAULT_CSS = (
        MODAL_CSS.format(name="ContextItemsScreen")
        + """
    ContextItemsScreen > Vertical { width: 95%; max-width: 140; height: 90%; max-height: 90%; }
    ContextItemsScreen Tree { height: 1fr; }
    """
    )
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    def __init__(self, facade: AppFacade, session: str, turn: int | None = None) -> None:
        super().__init__()
        self.facade = facade
        self.session = session
        self.turn = turn
        self.trace: ContextAssembled | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("what the model saw", id="items-title", markup=False)
            tree: Tree[TraceItem | None] = Tree("items", id="items")
            tree.show_root = False
            yield tree
            yield Label("enter expands an item to its text · esc closes", classes="hint")

    @property
    def items_tree(self) -> Tree[TraceItem | None]:
        return self.query_one("#items", Tree)

    async def on_mount(self) -> None:
        tree = self.items_tree
        tree.focus()
        try:
            self.trace = await self.facade.context.trace(self.session, self.turn)
        except Exception as exc:
            tree.root.add_leaf(Text(error_line(exc), style="red"))
            return
        if self.trace is None:
            tree.root.add_leaf(Text("no assembled turn yet", style="dim"))
            return
        self.turn = self.trace.turn
        title = f"turn {self.trace.turn} · {self.trace.model} · "
        title += f"{self.trace.used:,}/{self.trace.budget:,} tokens"
        self.query_one("#items-title", Label).update(title)
        try:
            texts = await self.facade.context.texts(self.session, turn=self.turn)
        except Exception:
            texts = {}  # the references still identify each item; expanding says what failed
        for item in self.trace.items:
            tree.root.add(item_label(item, texts.get(item.ref)), data=item, allow_expand=True)

    async def on_tree_node_expanded(self, event: Tree.NodeExpanded[TraceItem | None]) -> None:
        node = event.node
        item = node.data
        if item is None or node.children:
            return
        try:
            text = await self.facade.context.expand(self.session, item.ref, turn=self.turn)
        except Exception as exc:
            node.add_leaf(Text(error_line(exc), style="red"))
            return
        lines = text.splitlines() or [""]
        for line in lines[:MAX_LINES]:
            node.add_leaf(Text(visible(line, one_line=True)))
        if len(lines) > MAX_LINES:
            node.add_leaf(Text(f"… {len(lines) - MAX_LINES} more lines", style="dim"))

    def expanded_text(self) -> dict[str, str]:
        """ref -> the text shown under each expanded item (for tests and copying)."""
        out: dict[str, str] = {}
        for node in self.items_tree.root.children:
            if node.data is not None and node.children:
                out[node.data.ref] = "\n".join(str(c.label) for c in node.children)
        return out

    def action_close(self) -> None:
        self.dismiss(None)
