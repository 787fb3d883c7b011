"""Who is calling, and what untrusted text they have received.

Over HTTP, the bearer token of the request (set by ``kairox.mcp.http``'s middleware for the
request's task) says which client this is and whether it may write. Over stdio there is one
client: the process's. A client that has received untrusted text (search results, recalled
turns) carries it into every later proposal as provenance, as a turn's context would.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass

from kairox.core.errors import InvalidInput
from kairox.core.events import UntrustedInput

# The untrusted items remembered per client (the newest ones; the provenance of a proposal).
MAX_TAINT = 50


@dataclass(frozen=True, slots=True)
class Caller:
    """The client of one request: the token's name (``local`` over stdio) and its rights."""

    name: str
    read_only: bool = False


LOCAL = Caller("local")
CALLER: ContextVar[Caller] = ContextVar("kairox_mcp_caller", default=LOCAL)


def caller() -> Caller:
    return CALLER.get()


def require_write() -> None:
    """Refuse a write (propose, update, delete) for a read-only token."""
    who = caller()
    if who.read_only:
        raise InvalidInput(
            f"the token '{who.name}' is read-only; it may read memories but not "
            "propose or change them"
        )


class TaintLedger:
    """The untrusted text each client has received. Keyed by client, not by connection: the
    streamable HTTP protocol of 2026 has no connections, so one token's calls share one ledger
    (more proposals wait, never fewer)."""

    def __init__(self) -> None:
        self._seen: dict[str, dict[UntrustedInput, None]] = {}

    def record(self, items: Iterable[UntrustedInput]) -> None:
        seen = self._seen.setdefault(caller().name, {})
        for item in items:
            seen.pop(item, None)
            seen[item] = None
        while len(seen) > MAX_TAINT:
            del seen[next(iter(seen))]

    def current(self) -> tuple[UntrustedInput, ...]:
        return tuple(self._seen.get(caller().name, {}))
