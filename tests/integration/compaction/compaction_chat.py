"""Helpers for end-to-end compaction tests: a workspace config with small windows, a scripted
model file, a facade-driven chat, and a provider double whose stream waits on a gate."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kairox.app import AppFacade, TurnDone
from kairox.core.events import StoredEvent, UserMessageAdded
from kairox.core.outcomes import TurnOutcome
from kairox.models import ModelProvider, ModelRequest, Purpose, StreamItem

USER_TEXT = "Please continue with the next step of the migration plan and tell me what changed."
REPLY_TEXT = (
    "Done. I updated the schema, moved the old rows, and checked the indexes. "
    "Nothing else changed in the workspace."
)


def write_workspace(
    workspace: Path,
    script: Sequence[Mapping[str, object]],
    *,
    compaction: str = "retry_backoff_s = 0.0",
    profiles: str = "",
) -> Path:
    """Write the script and a config whose default profile ``small`` (2048/256) plays it."""
    path = workspace.parent / f"{workspace.name}-script.jsonl"
    path.write_text("".join(json.dumps(dict(line)) + "\n" for line in script))
    config = workspace / ".kairox" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(
        'default_profile = "small"\n'
        f'[profiles.small]\nmodel = "scripted:{path}"\ncontext_window = 2048\nheadroom = 256\n'
        f"{profiles.replace('SCRIPT', str(path))}\n"
        f"[compaction]\n{compaction}\n"
        "[retrieval]\nworkspace_index = false\n"
    )
    return path


def replies(n: int, text: str = REPLY_TEXT) -> list[dict[str, object]]:
    return [{"text": text, "chunk": 64} for _ in range(n)]


def summaries(*texts: str) -> list[dict[str, object]]:
    return [{"purpose": "summary", "text": t, "chunk": 64} for t in texts]


@dataclass
class Chat:
    facade: AppFacade
    name: str

    async def send(self, text: str = USER_TEXT) -> tuple[list[StoredEvent], TurnOutcome]:
        """One turn through the facade: every event it streamed, and the outcome."""
        seen: list[StoredEvent] = []
        outcome: TurnOutcome | None = None
        async for update in self.facade.chat.send(self.name, text):
            if isinstance(update, TurnDone):
                outcome = update.outcome
            else:
                seen.append(update)
        assert outcome is not None
        return seen, outcome

    async def events(self) -> list[StoredEvent]:
        return await self.facade.events.list(session=self.name)


OpenChat = Callable[..., Awaitable["Chat"]]


def user_texts(events: Sequence[StoredEvent]) -> list[tuple[int, str]]:
    """(seq, text) of every user message."""
    return [(e.seq, e.payload.text) for e in events if isinstance(e.payload, UserMessageAdded)]


def types_between(events: Sequence[StoredEvent], after: int, before: int) -> list[str]:
    return [e.type for e in events if after < e.seq < before]


@dataclass
class Gate:
    """Shared by every ``GatedProvider``: held calls wait for ``open``; ``entered`` says one
    is waiting."""

    purposes: set[Purpose]
    open: asyncio.Event = field(default_factory=asyncio.Event)
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    requests: list[ModelRequest] = field(default_factory=list)


class GatedProvider:
    """Wraps a provider: records every request, and holds calls of the gated purposes."""

    def __init__(self, inner: ModelProvider, gate: Gate) -> None:
        self.inner = inner
        self.g = gate

    @property
    def spec(self) -> str:
        return self.inner.spec

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.g.requests.append(request)
        if request.purpose in self.g.purposes:
            self.g.entered.set()
            await self.g.open.wait()
        async for item in self.inner.stream(request):
            yield item

    async def aclose(self) -> None:
        await self.inner.aclose()


async def wait_for(predicate: Callable[[], bool], *, within_s: float = 30.0) -> None:
    """Poll ``predicate()`` until true, with a deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("state not reached before the deadline")
        await asyncio.sleep(0.01)
