"""The profile picker: choose which model profile the session uses from now on.

The caller passes the profiles defined in the workspace config; the picker returns an alias or
None, and the chat screen asks the facade to switch (the switch queues behind a running turn).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from kairox.tui.dialogs import MODAL_CSS


class ProfilePicker(ModalScreen[str | None]):
    DEFAULT_CSS = MODAL_CSS.format(name="ProfilePicker")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, profiles: list[tuple[str, str]], current: str) -> None:
        """``profiles`` holds (alias, model) pairs."""
        super().__init__()
        self.profiles = profiles
        self.current = current

    def compose(self) -> ComposeResult:
        options = [
            Option(f"{'●' if alias == self.current else ' '} {alias}  ({model})", id=alias)
            for alias, model in self.profiles
        ]
        with Vertical():
            yield Label("Switch profile (enter picks, esc cancels)")
            yield OptionList(*options, id="profiles")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        for index, (alias, _model) in enumerate(self.profiles):
            if alias == self.current:
                options.highlighted = index

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
