"""The one-line notice under the chat: errors, queued work and confirmations, never a crash.

Every failure the UI catches ends up here as a single line; ``error_line`` turns an exception
into that line the same way the CLI edge does.
"""

from __future__ import annotations

from typing import Literal

from textual.widgets import Static

from kairox.core.errors import KairoxError

Level = Literal["info", "warning", "error"]
_LEVELS: tuple[Level, ...] = ("info", "warning", "error")


def error_line(exc: BaseException) -> str:
    """One line for the user: a KairoxError says what to do; anything else is labelled."""
    if isinstance(exc, KairoxError):
        text = str(exc)
    else:
        text = f"internal error ({type(exc).__name__}): {exc}"
    return " ".join(text.split())


class NoticeBar(Static):
    """A single line that shows the latest notice; it keeps no history."""

    DEFAULT_CSS = """
    NoticeBar {
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }
    NoticeBar.-warning { color: $warning; }
    NoticeBar.-error { color: $error; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.text = ""
        self.level: Level = "info"

    def show(self, text: str, level: Level = "info") -> None:
        line = " ".join(text.split())
        self.text = line
        self.level = level
        for name in _LEVELS:
            self.set_class(name == level and name != "info", f"-{name}")
        prefix = {"info": "", "warning": "! ", "error": "error: "}[level]
        if level == "error" and line.startswith("error: "):
            prefix = ""
        self.update(prefix + line if line else "")

    def clear(self) -> None:
        self.show("")

    def error(self, exc_or_text: BaseException | str) -> None:
        text = exc_or_text if isinstance(exc_or_text, str) else error_line(exc_or_text)
        self.show(text, "error")
