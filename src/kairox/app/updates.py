"""What ``facade.chat.send`` yields: the events of a turn as they are appended, then ``TurnDone``.

It lives apart from the chat area (which loads the runtime) so a surface can name it at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass

from kairox.core.events import StoredEvent
from kairox.core.outcomes import TurnOutcome


@dataclass(frozen=True)
class TurnDone:
    """The last item of ``facade.chat.send``: the turn's outcome."""

    outcome: TurnOutcome


ChatUpdate = StoredEvent | TurnDone

__all__ = ["ChatUpdate", "TurnDone"]
