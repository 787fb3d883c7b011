"""Contract: ``EventStore.subscribe`` is one ordered stream, on SQLite and on Postgres.

Two ``Services`` on one store stand for two processes: what this one appends is pushed at commit,
what the other one appends arrives through the follower (polling on SQLite, NOTIFY on Postgres).
Every event arrives once, in seq order, and a rolled-back append never arrives.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kairox.core.events import StoredEvent, UserMessageAdded
from kairox.services import Services
from kairox.store.events import NewEvent


@pytest.fixture
def pair(kairox_home: Path, store_url: str | None) -> tuple[Services, Services]:
    return (
        Services.open(kairox_home, store_url=store_url),
        Services.open(kairox_home, store_url=store_url),
    )


async def _collect(
    services: Services, want: int, *, session_id: str | None = None
) -> list[StoredEvent]:
    subscription = services.events.subscribe(session_id=session_id, poll_s=0.05)
    seen: list[StoredEvent] = []
    try:
        async with asyncio.timeout(60):
            async for event in subscription:
                seen.append(event)
                if len(seen) == want:
                    break
    finally:
        subscription.close()
    return seen


async def test_local_and_foreign_appends_arrive_once_in_order(
    pair: tuple[Services, Services],
) -> None:
    one, two = pair
    collecting = asyncio.create_task(_collect(one, 6))
    await asyncio.sleep(0.2)  # subscribed: everything after "now"
    for i in range(3):
        await asyncio.to_thread(
            one.events.append,
            UserMessageAdded(turn=1, text=f"mine {i}"),
            session_id="s1",
            workspace_id=None,
        )
        await asyncio.to_thread(
            two.events.append,
            UserMessageAdded(turn=1, text=f"theirs {i}"),
            session_id="s1",
            workspace_id=None,
        )
    seen = await collecting
    texts = [e.payload.text for e in seen if isinstance(e.payload, UserMessageAdded)]
    assert sorted(texts) == sorted(
        [f"mine {i}" for i in range(3)] + [f"theirs {i}" for i in range(3)]
    )
    seqs = [e.seq for e in seen]
    assert seqs == sorted(seqs) and len(set(seqs)) == 6


async def test_a_rolled_back_append_is_never_published(pair: tuple[Services, Services]) -> None:
    one, _two = pair
    collecting = asyncio.create_task(_collect(one, 1))
    await asyncio.sleep(0.2)

    def rolled_back() -> None:
        with pytest.raises(RuntimeError), one.db.atomic():
            one.events.append(
                UserMessageAdded(turn=1, text="gone"), session_id="s1", workspace_id=None
            )
            raise RuntimeError("abort")
        one.events.append(UserMessageAdded(turn=1, text="kept"), session_id="s1", workspace_id=None)

    await asyncio.to_thread(rolled_back)
    seen = await collecting
    assert [e.payload.text for e in seen if isinstance(e.payload, UserMessageAdded)] == ["kept"]


async def test_a_session_filter_sees_only_its_session(pair: tuple[Services, Services]) -> None:
    one, two = pair
    collecting = asyncio.create_task(_collect(one, 2, session_id="s2"))
    await asyncio.sleep(0.2)
    for sid in ("s1", "s2", "s1", "s2"):
        await asyncio.to_thread(
            two.events.append, UserMessageAdded(turn=1, text=sid), session_id=sid, workspace_id=None
        )
    seen = await collecting
    assert [e.session_id for e in seen] == ["s2", "s2"]


class _Words:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


async def test_a_batch_append_arrives_once_in_order_with_its_counts(
    pair: tuple[Services, Services],
) -> None:
    one, two = pair
    here = asyncio.create_task(_collect(one, 5))
    there = asyncio.create_task(_collect(two, 5))
    await asyncio.sleep(0.2)
    first = await asyncio.to_thread(
        one.events.append,
        UserMessageAdded(turn=1, text="first"),
        session_id="s1",
        workspace_id=None,
    )
    batch = [
        NewEvent(UserMessageAdded(turn=1, text=f"batch number {i}"), "s1", None) for i in range(4)
    ]
    seqs = await asyncio.to_thread(one.events.append_many, batch, counter=_Words())
    assert seqs == list(range(seqs[0], seqs[0] + 4)) and seqs[0] > first.seq
    for seen in (await here, await there):
        assert [e.seq for e in seen] == [first.seq, *seqs]
        assert [getattr(e.payload, "text", None) for e in seen] == [
            "first",
            *(f"batch number {i}" for i in range(4)),
        ]
    page = one.events.history_page(
        "s1", ["UserMessageAdded"], counter="words", chat_counter="none", before=None, limit=10
    )
    assert sorted((r.seq, r.tokens) for r in page) == [(first.seq, None)] + [(s, 3) for s in seqs]
