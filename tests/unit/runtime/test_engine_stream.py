"""``Engine.stream(session, text)``: one turn as the session's events, once each and in seq
order, then its outcome; what the chat area's ``send`` relays."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kairox.app import AppFacade, TurnDone
from kairox.core.events import StoredEvent
from kairox.core.outcomes import TurnOutcome


async def test_stream_yields_the_turns_events_then_its_outcome(
    kairox_home: Path, workspace: Path, script: Callable[..., str]
) -> None:
    facade = AppFacade.open(kairox_home, model=script("First.", "Second.", "Third."))
    try:
        info = await facade.chat.open("s", workspace=workspace)
        await facade.chat.run(info.id, "hello")  # an earlier turn's events are not this one's
        before = facade.services.events.last_seq()
        items = [item async for item in facade.engine.stream(info.id, "again")]
        *events, outcome = items
        assert isinstance(outcome, TurnOutcome) and outcome.failure is None
        assert all(isinstance(e, StoredEvent) for e in events)
        seqs = [e.seq for e in events if isinstance(e, StoredEvent)]
        assert seqs == sorted(set(seqs)) and seqs[0] > before
        assert seqs[-1] == facade.services.events.last_seq()
        types = [e.type for e in events if isinstance(e, StoredEvent)]
        assert types[0] == "UserMessageAdded" and "AssistantMessageCompleted" in types
        relayed = [u async for u in facade.chat.send(info.id, "third")]
        assert isinstance(relayed[-1], TurnDone)
    finally:
        await facade.aclose()
        facade.close()
