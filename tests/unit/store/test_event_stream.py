"""The store's one ordered stream: each committed event reaches a subscriber once, in seq order,
whether this process wrote it (pushed at commit) or another one did (the follower polls by seq)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from kairox.core.events import StoredEvent, UserMessageAdded
from kairox.store.db import Database
from kairox.store.events import SqliteEventStore
from kairox.store.hub import Subscription
from kairox.testing import FakeClock

WRITER = textwrap.dedent(
    """
    import sys
    from kairox.core.events import UserMessageAdded
    from kairox.services import Services

    home, session, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    services = Services.open(home)
    for n in range(first, first + count):
        services.events.append(
            UserMessageAdded(turn=n, text=f"from the other process {n}"),
            session_id=session,
            workspace_id="ws",
        )
    services.close()
    """
)


@pytest.fixture
def store(tmp_path: Path) -> SqliteEventStore:
    return SqliteEventStore(Database.open(tmp_path / "k.db"), FakeClock())


def add(store: SqliteEventStore, n: int, session: str = "ses_a") -> StoredEvent:
    return store.append(
        UserMessageAdded(turn=n, text=f"m{n}"), session_id=session, workspace_id="ws"
    )


class Collector:
    """Iterates a subscription in a task and keeps what it yields."""

    def __init__(self, subscription: Subscription) -> None:
        self.subscription = subscription
        self.seen: list[StoredEvent] = []
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for event in self.subscription:
            self.seen.append(event)

    async def until(self, predicate: Callable[[list[StoredEvent]], bool], what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not predicate(self.seen):
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; saw {self.seqs}")
            await asyncio.sleep(0.01)

    @property
    def seqs(self) -> list[int]:
        return [e.seq for e in self.seen]

    async def close(self) -> None:
        self.subscription.close()
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def test_in_process_appends_reach_every_subscriber_once_in_seq_order(
    store: SqliteEventStore,
) -> None:
    add(store, 0)
    a = Collector(store.subscribe(poll_s=60))  # from now; a long poll: pushes alone deliver
    b = Collector(store.subscribe(session_id="ses_b", poll_s=60))
    written = [add(store, n, "ses_a" if n % 2 else "ses_b") for n in range(1, 9)]
    written += await asyncio.gather(*(asyncio.to_thread(add, store, n) for n in range(9, 15)))
    await a.until(lambda seen: len(seen) >= 14, "every event")
    await b.until(lambda seen: len(seen) >= 4, "the session's events")
    expected = sorted(e.seq for e in written)
    assert a.seqs == expected
    assert b.seqs == [e.seq for e in written if e.session_id == "ses_b"]
    assert a.seen == store.read(after=expected[0] - 1)  # as read() returns them
    await a.close()
    await b.close()
    assert store.hub.subscribers == 0


async def test_a_rolled_back_append_is_never_published_and_nested_ones_wait_for_commit(
    store: SqliteEventStore,
) -> None:
    c = Collector(store.subscribe(poll_s=60))
    with pytest.raises(RuntimeError), store.db.atomic():
        add(store, 1)
        raise RuntimeError("abort")
    with store.db.atomic():
        kept = add(store, 2)
        with pytest.raises(RuntimeError), store.db.atomic():
            add(store, 3)
            raise RuntimeError("abort the savepoint")
        await asyncio.sleep(0)
        assert c.seen == []  # not committed yet
    await c.until(lambda seen: len(seen) >= 1, "the committed event")
    last = add(store, 4)
    await c.until(lambda seen: len(seen) >= 2, "the next event")
    assert c.seqs == [kept.seq, last.seq]
    await c.close()


async def test_a_subscription_after_a_seq_reads_the_backlog_then_goes_live(
    store: SqliteEventStore,
) -> None:
    old = [add(store, n) for n in range(5)]
    c = Collector(store.subscribe(after=old[1].seq, poll_s=60))
    new = add(store, 5)
    await c.until(lambda seen: len(seen) >= 4, "backlog and live")
    assert c.seqs == [e.seq for e in old[2:]] + [new.seq]
    await c.close()


async def test_events_of_another_process_arrive_once_in_order_between_ours(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    from kairox.services import Services

    services = Services.open(home)
    events = services.events
    c = Collector(events.subscribe(poll_s=0.05))
    try:

        def other_process(first: int, count: int) -> None:
            subprocess.run(
                [sys.executable, "-c", WRITER, str(home), "ses_a", str(first), str(count)],
                check=True,
                timeout=120,
            )

        add(events, 0)
        await asyncio.to_thread(other_process, 100, 5)
        add(events, 1)  # the push finds a gap: the other process's events come first
        await asyncio.to_thread(other_process, 200, 5)  # nothing of ours after: the follower
        await c.until(lambda seen: len(seen) >= 12, "our 2 and their 10 events")
        add(events, 2)
        await c.until(lambda seen: len(seen) >= 13, "the last event")
        log = events.read()
        assert c.seqs == [e.seq for e in log]  # every event once, in seq order
        assert [e.payload.turn for e in c.seen] == [  # type: ignore[union-attr]
            0,
            *range(100, 105),
            1,
            *range(200, 205),
            2,
        ]
    finally:
        await c.close()
        services.close()
