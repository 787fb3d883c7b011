"""Running blocking store calls from async code."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


async def blocking(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking read off the event loop."""
    return await asyncio.to_thread(fn, *args, **kwargs)


async def shielded(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking write off the loop; a cancelled caller never leaves it half-done."""
    return await asyncio.shield(asyncio.to_thread(fn, *args, **kwargs))
