"""The library API: ``Memory`` (sync) and ``AsyncMemory``, a few verbs over ``AppFacade``.

They add no behaviour of their own: each method is one facade call with the defaults a script
wants (the home and the current directory as the workspace, like the CLI).
"""

from kairox.api.aio import AsyncMemory, Messages, MessagesOrText, as_messages
from kairox.api.loop import LoopThread
from kairox.api.sync import Memory

__all__ = ["AsyncMemory", "LoopThread", "Memory", "Messages", "MessagesOrText", "as_messages"]
