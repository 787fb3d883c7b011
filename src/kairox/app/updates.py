"""What ``facade.chat.send`` yields: the events of a turn as they are appended, then ``TurnDone``.

It lives apart from the chat area (which loads the runtime) so a surface can name it at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass

from kairox.core.events import ModelCallStarted, StoredEvent
from kairox.core.outcomes import TurnOutcome


@dataclass(frozen=True)
class TurnDone:
    """The last item of ``facade.chat.send``: the turn's outcome."""

    outcome: TurnOutcome


ChatUpdate = StoredEvent | TurnDone

LOADING_LABEL = "loading model…"
WAITING_LABEL = "waiting for the model…"


def waiting_label(call: ModelCallStarted) -> str:
    """What a surface shows, with a spinner, from a model call's start to its first token."""
    return LOADING_LABEL if call.loading else WAITING_LABEL


__all__ = ["LOADING_LABEL", "WAITING_LABEL", "ChatUpdate", "TurnDone", "waiting_label"]
