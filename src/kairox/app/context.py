"""The context trace, as the surfaces see it: which turn saw what, and why."""

from __future__ import annotations

from kairox.context.replay import item_text, load_assembly, replay
from kairox.context.tokens import TokenizerRegistry
from kairox.core.aio import blocking
from kairox.core.events import CompactionSummary, ContextAssembled, StoredEvent
from kairox.core.messages import ChatMessage
from kairox.services import Services


class ContextArea:
    def __init__(self, services: Services, tokenizers: TokenizerRegistry) -> None:
        self._s = services
        self._tokenizers = tokenizers

    async def _session_id(self, session: str) -> str:
        return (await blocking(self._s.sessions.get, session)).id

    async def assemblies(self, session: str) -> list[StoredEvent]:
        session_id = await self._session_id(session)
        return await blocking(
            self._s.events.read, session_id=session_id, types=["ContextAssembled"]
        )

    async def turns(self, session: str) -> list[int]:
        numbers = (
            e.payload.turn
            for e in await self.assemblies(session)
            if isinstance(e.payload, ContextAssembled)
        )
        return list(dict.fromkeys(numbers))  # a turn with tool rounds assembles once per call

    async def trace(self, session: str, turn: int | None = None) -> ContextAssembled | None:
        """The assembly of ``turn`` (the last one when ``turn`` is None), or None."""
        found: ContextAssembled | None = None
        for event in await self.assemblies(session):
            payload = event.payload
            if isinstance(payload, ContextAssembled) and (turn is None or payload.turn == turn):
                found = payload
        return found

    async def summaries(self, session: str) -> list[StoredEvent]:
        session_id = await self._session_id(session)
        events = await blocking(
            self._s.events.read, session_id=session_id, types=["CompactionSummary"]
        )
        return [e for e in events if isinstance(e.payload, CompactionSummary)]

    async def replay(self, session: str, turn: int) -> tuple[ChatMessage, ...]:
        """Rebuild, from the log alone, the exact messages the model was sent for ``turn``."""

        session_id = await self._session_id(session)
        return await blocking(
            replay, self._s.events, self._s.memories, session_id, turn, self._tokenizers
        )

    async def expand(self, session: str, ref: str, *, turn: int | None = None) -> str:
        """The text one item of a turn's assembly (the last turn when ``turn`` is None) put in
        front of the model: what a reference such as ``mem:…@v4`` or ``seq:106`` stands for.
        Every surface that shows a trace expands items through this one call."""
        session_id = await self._session_id(session)

        def read() -> str:
            assembly = load_assembly(self._s.events, session_id, turn)
            assert isinstance(assembly.payload, ContextAssembled)
            tokenizer = self._tokenizers.get(assembly.payload.tokenizer)
            return item_text(self._s.events, self._s.memories, assembly, ref, tokenizer)

        return await blocking(read)

    async def texts(self, session: str, *, turn: int | None = None) -> dict[str, str]:
        """ref -> what ``expand`` gives, for every item of a turn's assembly in one read, so a
        surface can list each item by a snippet of its text rather than by its reference."""
        session_id = await self._session_id(session)

        def read() -> dict[str, str]:
            assembly = load_assembly(self._s.events, session_id, turn)
            trace = assembly.payload
            assert isinstance(trace, ContextAssembled)
            tokenizer = self._tokenizers.get(trace.tokenizer)
            return {
                item.ref: item_text(self._s.events, self._s.memories, assembly, item.ref, tokenizer)
                for item in trace.items
            }

        return await blocking(read)
