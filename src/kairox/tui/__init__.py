"""The terminal UI (``kairox chat``), built on Textual behind the ``tui`` extra.

Importing this package never imports Textual; ``run_chat`` does, and a missing extra becomes a
``MissingExtra`` error that names what to install.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.core.errors import MissingExtra

if TYPE_CHECKING:
    from kairox.app import AppFacade


@dataclass(frozen=True)
class ChatOptions:
    """What the chat app needs besides the facade."""

    session: str
    workspace: Path
    profile: str | None = None


def require_textual() -> None:
    """Raise ``MissingExtra`` unless Textual can be imported."""
    try:
        import textual  # noqa: F401
    except ImportError:
        raise MissingExtra("the terminal UI", "tui") from None


def run_chat(facade: AppFacade, options: ChatOptions) -> None:
    """Run the chat app in this terminal until the user quits."""
    require_textual()
    from kairox.tui.app import KairoxApp

    KairoxApp(facade, options).run()


__all__ = ["ChatOptions", "require_textual", "run_chat"]
