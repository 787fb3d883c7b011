"""What every retrieval source returns, and the protocol each one implements."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict


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
