"""One ordered stream of committed events per process: ``EventHub`` and its ``Subscription``s.

Surfaces follow the log through this stream only. The backend calls ``EventHub.committed`` after
each commit (in the writer's thread), and the follower (``EventHub.poll``) picks up what other
processes wrote. Both paths go through one cursor under one lock, so every subscriber receives
every event exactly once, in seq order, whichever process wrote it.

The hub is backend-neutral. It needs two reads from its store: ``read(after=, until=, session_id=,
limit=)`` (events with ``after < seq <= until``, oldest first) and ``head()`` (the highest
committed seq).
It relies on one property of the backend: once an event is committed, every event with a lower
seq is committed too (SQLite's single writer gives this; a backend with concurrent writers must
call ``committed`` only for events below which nothing can still commit, and wake ``poll`` from
its own notification, for instance LISTEN/NOTIFY).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from kairox.core.aio import TimedOut, blocking, get_within
from kairox.core.events import StoredEvent

log = logging.getLogger(__name__)

Head = Callable[[], int]
WaitForAppend = Callable[[int, float], bool]


class RangeReader(Protocol):
    """The store's read: events with ``after < seq <= until``, oldest first."""

    def __call__(
        self,
        *,
        after: int = 0,
        session_id: str | None = None,
        limit: int | None = None,
        until: int | None = None,
    ) -> Sequence[StoredEvent]: ...


DEFAULT_POLL_S = 0.2
BACKLOG_PAGE = 500


class EventHub:
    """Publishes committed events to this process's subscribers, once each, in seq order."""

    def __init__(self, read: RangeReader, head: Head, wait: WaitForAppend | None = None) -> None:
        self._read = read
        self._head = head
        self._wait = wait  # the backend's "an event past N committed" signal, when it has one
        self._lock = threading.Lock()
        self._cursor = 0  # every event up to here reached every current subscriber
        self._subscribers: list[Subscription] = []

    def subscribe(
        self,
        *,
        after: int | None = None,
        session_id: str | None = None,
        poll_s: float = DEFAULT_POLL_S,
    ) -> Subscription:
        """Events after ``after`` (default: from now), of one session when ``session_id`` is set.

        Call it from the event loop that will iterate the subscription.
        """
        loop = asyncio.get_running_loop()
        with self._lock:
            if not self._subscribers:
                self._cursor = self._head()  # nobody listened: start from what is committed
            start = self._cursor if after is None else after
            subscription = Subscription(
                self,
                loop,
                after=start,
                backlog_until=self._cursor,
                session_id=session_id,
                poll_s=poll_s,
            )
            self._subscribers.append(subscription)
        return subscription

    def committed(self, event: StoredEvent) -> None:
        """The backend committed ``event`` in this process; publish it (and any gap before it)."""
        try:
            with self._lock:
                if not self._subscribers or event.seq <= self._cursor:
                    self._cursor = max(self._cursor, event.seq)
                    return
                if event.seq > self._cursor + 1:  # another process (or thread) committed first
                    self._deliver(self._read(after=self._cursor, until=event.seq - 1))
                self._deliver([event])
        except Exception:  # a reader's trouble must never fail the write that already committed
            log.exception("publishing event %s failed; subscribers catch up on their next poll")

    def poll(self) -> None:
        """The follower: deliver what other processes committed since the last event seen."""
        with self._lock:
            if not self._subscribers:
                return
            head = self._head()
            if head > self._cursor:
                self._deliver(self._read(after=self._cursor, until=head))

    def wait_for_others(self, timeout_s: float) -> bool:
        """Block until another process may have committed past what was delivered (True), or
        ``timeout_s`` passes. Without a backend signal it only sleeps, and the caller polls."""
        if self._wait is None:
            return False
        return self._wait(self._cursor, timeout_s)

    @property
    def pushes_changes(self) -> bool:
        return self._wait is not None

    def _deliver(self, events: Sequence[StoredEvent]) -> None:
        for event in events:
            if event.seq <= self._cursor:
                continue
            self._cursor = event.seq
            for subscription in list(self._subscribers):
                if not subscription._push(event):
                    self._subscribers.remove(subscription)

    def _remove(self, subscription: Subscription) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._subscribers.remove(subscription)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)


class Subscription:
    """An async iterator of committed events; ``aclose()`` (or ``close()``) ends it.

    It first reads the events it asked for that were committed before it subscribed (the
    backlog), then yields what the hub publishes. While nothing arrives it runs the follower
    every ``poll_s`` seconds.
    """

    def __init__(
        self,
        hub: EventHub,
        loop: asyncio.AbstractEventLoop,
        *,
        after: int,
        backlog_until: int,
        session_id: str | None,
        poll_s: float,
    ) -> None:
        self._hub = hub
        self._loop = loop
        self._session_id = session_id
        self._poll_s = poll_s
        self._cursor = after
        self._backlog_until = backlog_until
        self._backlog: list[StoredEvent] = []
        self._queue: asyncio.Queue[StoredEvent] = asyncio.Queue()
        self._closed = False

    @property
    def cursor(self) -> int:
        """The seq of the last event this subscription yielded (or where it started)."""
        return self._cursor

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> StoredEvent:
        while True:
            if self._closed:
                raise StopAsyncIteration
            event = await self._next_backlog()
            if event is None:
                event = await self._next_published()
                if event is None:
                    await blocking(self._hub.poll)
                    continue
            if event.seq <= self._cursor:
                continue  # before ``after``: the caller has it already
            self._cursor = event.seq
            return event

    async def _next_published(self) -> StoredEvent | None:
        """The next published event, or None when the follower should run: after ``poll_s``, or
        as soon as the backend signals a commit by another process (Postgres NOTIFY)."""
        if not self._hub.pushes_changes:
            item = await get_within(self._queue, self._poll_s)
            return None if isinstance(item, TimedOut) else item
        getter = asyncio.ensure_future(self._queue.get())
        # Bounded waits keep a cancelled subscriber from pinning a worker thread for long.
        signal = asyncio.ensure_future(blocking(self._hub.wait_for_others, min(self._poll_s, 1.0)))
        try:
            await asyncio.wait({getter, signal}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            signal.cancel()
            if not getter.done():
                getter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await getter
        return getter.result() if getter.done() and not getter.cancelled() else None

    def drain(self) -> list[StoredEvent]:
        """What was already published to this subscription, without waiting (no backlog read)."""
        out: list[StoredEvent] = []
        while not self._queue.empty():
            event = self._queue.get_nowait()
            if event.seq > self._cursor:
                self._cursor = event.seq
                out.append(event)
        return out

    def close(self) -> None:
        self._closed = True
        self._hub._remove(self)

    async def aclose(self) -> None:
        self.close()

    async def _next_backlog(self) -> StoredEvent | None:
        if not self._backlog and self._cursor < self._backlog_until:
            page = await blocking(
                self._hub._read,
                after=self._cursor,
                until=self._backlog_until,
                session_id=self._session_id,
                limit=BACKLOG_PAGE,
            )
            self._backlog = list(reversed(page))
            if not self._backlog:
                self._cursor = max(self._cursor, self._backlog_until)
        return self._backlog.pop() if self._backlog else None

    def _wanted(self, event: StoredEvent) -> bool:
        return self._session_id is None or event.session_id == self._session_id

    def _push(self, event: StoredEvent) -> bool:
        """Hand ``event`` to the subscriber's loop; False when that loop is gone."""
        if not self._wanted(event):
            return True
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
        except RuntimeError:  # the loop is closed: the subscriber is gone
            self._closed = True
            return False
        return True
