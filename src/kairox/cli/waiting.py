"""The wait before the first token, on the terminal: a spinner and what is happening.

An embedded model can take seconds to load; without a sign of life the user sees a frozen
prompt. On a terminal the line spins until the first token and is then erased; when stderr is
not a terminal (a pipe, a log) nothing is written: a spinner is for a person watching, and a
log keeps only what happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TextIO

from kairox.app import waiting_label
from kairox.core.events import ModelCallStarted

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
FRAME_S = 0.1


class Waiting:
    """Shows ``waiting_label(call)`` on stderr from ``start`` until ``stop``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream: TextIO = stream if stream is not None else sys.stderr
        self._task: asyncio.Task[None] | None = None

    @property
    def active(self) -> bool:
        return self._task is not None

    def start(self, call: ModelCallStarted) -> None:
        if self._task is not None:
            return
        if not self._stream.isatty():
            return
        self._task = asyncio.create_task(self._spin(waiting_label(call)))

    async def _spin(self, label: str) -> None:
        frame = 0
        while True:
            self._stream.write(f"\r{FRAMES[frame % len(FRAMES)]} {label}")
            self._stream.flush()
            frame += 1
            await asyncio.sleep(FRAME_S)  # animation frame, not a wait for state

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        self._stream.write("\r\033[K")
        self._stream.flush()
