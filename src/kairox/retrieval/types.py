"""What every retrieval source returns, and the protocol each one implements."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict


def snippet_of(text: str, width: int = 160) -> str:
    """The start of a hit's text on one line, at most ``width`` characters (an ellipsis marks
    the cut): what ``kairox search`` and ``kairox recall`` print."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


class RetrievalHit(BaseModel):
    """One retrieved passage. ``source`` is ``workspace:<path>`` or ``kb:<id>``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    source: str
    chunk_id: str
    text: str
    score: float
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    title: str | None = None


class WorkspaceRetriever(Protocol):
    """A retrieval source. Implementations must not write to the memory store."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]: ...
