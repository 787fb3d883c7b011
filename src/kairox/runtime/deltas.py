"""Streamed reply text, coalesced before it is written: a reply is a handful of log rows.

The first visible piece is written at once (time to first token is unchanged); after it, pieces
are held until 256 characters wait or 50 ms have passed since the last write, and whatever waits
is written when the stream ends, fails, or another event of the turn must come after it. The
visible stream is the same text in fewer, larger ``ModelTokenDelta`` events.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

INTERVAL_S = 0.05
MAX_CHARS = 256


class DeltaCoalescer:
    def __init__(
        self,
        now: Callable[[], datetime],
        *,
        interval_s: float = INTERVAL_S,
        max_chars: int = MAX_CHARS,
    ) -> None:
        self._now = now
        self._interval_s = interval_s
        self._max_chars = max_chars
        self._pending: list[str] = []
        self._size = 0
        self._last: datetime | None = None

    def feed(self, text: str) -> str | None:
        """Add visible text; the text to write now, if it is time to write."""
        if text:
            self._pending.append(text)
            self._size += len(text)
        if not self._pending:
            return None
        if self._last is None or self._size >= self._max_chars:
            return self.flush()
        if (self._now() - self._last).total_seconds() >= self._interval_s:
            return self.flush()
        return None

    def flush(self) -> str | None:
        """Everything waiting, to write now (None when nothing waits)."""
        if not self._pending:
            return None
        text = "".join(self._pending)
        self._pending.clear()
        self._size = 0
        self._last = self._now()
        return text
