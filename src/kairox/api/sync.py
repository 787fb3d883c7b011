"""``Memory``: ``AsyncMemory`` for code that is not async.

Each call runs the ``AsyncMemory`` method on one event loop that the instance keeps on a
background thread, so it works from plain scripts and from inside a running loop (a notebook)
alike, and the session actors and store connections keep one loop for their whole life.
"""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar, overload

from kairox.api.aio import AsyncMemory, Messages, MessagesOrText
from kairox.api.loop import LoopThread
from kairox.app import AppFacade, AssembledContext, ModelProvider
from kairox.core.records import MemoryHit, MemoryRecord, MemoryVersion
from kairox.core.types import MemoryScope, MemoryStatus

T = TypeVar("T")


class Memory:
    """Memories of one home and workspace, for plain (sync) code.

    >>> with Memory() as memory:
    ...     record = memory.add("I prefer tea", scope="user")

    The arguments and every method are those of ``AsyncMemory``, returning the result instead
    of a coroutine.
    """

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        workspace: str | Path | None = None,
        session: str | None = None,
        model: str | ModelProvider | None = None,
        facade: AppFacade | None = None,
    ) -> None:
        self._loop = LoopThread("kairox-memory", owner="Memory")
        try:
            self._async = AsyncMemory(
                home, workspace=workspace, session=session, model=model, facade=facade
            )
        except BaseException:
            self._loop.stop()
            raise

    @property
    def facade(self) -> AppFacade:
        return self._async.facade

    @property
    def workspace(self) -> Path:
        return self._async.workspace

    @overload
    def add(
        self,
        messages_or_text: str,
        *,
        scope: MemoryScope | str = ...,
        key: str | None = ...,
        workspace: str | Path | None = ...,
        session: str | None = ...,
        propose: bool = ...,
        infer: bool = ...,
    ) -> MemoryRecord: ...

    @overload
    def add(
        self,
        messages_or_text: Messages,
        *,
        scope: MemoryScope | str = ...,
        key: str | None = ...,
        workspace: str | Path | None = ...,
        session: str | None = ...,
        propose: bool = ...,
        infer: Literal[True] = ...,
    ) -> list[MemoryRecord]: ...

    @overload
    def add(
        self,
        messages_or_text: Messages,
        *,
        scope: MemoryScope | str = ...,
        key: str | None = ...,
        workspace: str | Path | None = ...,
        session: str | None = ...,
        propose: bool = ...,
        infer: Literal[False],
    ) -> MemoryRecord: ...

    def add(
        self,
        messages_or_text: MessagesOrText,
        *,
        scope: MemoryScope | str = MemoryScope.USER,
        key: str | None = None,
        workspace: str | Path | None = None,
        session: str | None = None,
        propose: bool = False,
        infer: bool = True,
    ) -> MemoryRecord | list[MemoryRecord]:
        """See ``AsyncMemory.add``: a text is stored (accepted, or waiting with
        ``propose=True``); a conversation is read by the model for facts (``infer=False``:
        stored verbatim)."""
        aio, ws, name = self._async, workspace, session
        if isinstance(messages_or_text, str):
            return self._run(
                aio.add(
                    messages_or_text,
                    scope=scope,
                    key=key,
                    workspace=ws,
                    session=name,
                    propose=propose,
                )
            )
        if infer:
            return self._run(aio.add(messages_or_text, key=key, workspace=ws, session=name))
        return self._run(
            aio.add(
                messages_or_text,
                scope=scope,
                key=key,
                workspace=ws,
                session=name,
                propose=propose,
                infer=False,
            )
        )

    def update(self, memory_id: str, body: str) -> MemoryRecord:
        """See ``AsyncMemory.update``."""
        return self._run(self._async.update(memory_id, body))

    def delete(self, memory_id: str) -> MemoryRecord:
        """See ``AsyncMemory.delete``."""
        return self._run(self._async.delete(memory_id))

    def approve(self, memory_id: str) -> MemoryRecord:
        """See ``AsyncMemory.approve``."""
        return self._run(self._async.approve(memory_id))

    def reject(self, memory_id: str, *, reason: str = "rejected by the user") -> MemoryRecord:
        """See ``AsyncMemory.reject``."""
        return self._run(self._async.reject(memory_id, reason=reason))

    def get(self, memory_id: str) -> MemoryRecord:
        """See ``AsyncMemory.get``."""
        return self._run(self._async.get(memory_id))

    def get_all(
        self,
        *,
        scope: MemoryScope | str | None = None,
        status: MemoryStatus | str | None = None,
    ) -> list[MemoryRecord]:
        """See ``AsyncMemory.get_all``."""
        return self._run(self._async.get_all(scope=scope, status=status))

    def search(
        self, query: str, *, scope: MemoryScope | str | None = None, k: int = 10
    ) -> list[MemoryHit]:
        """See ``AsyncMemory.search``: memories by meaning, best first, with scores."""
        return self._run(self._async.search(query, scope=scope, k=k))

    def extract(self, messages: Messages) -> list[MemoryRecord]:
        """See ``AsyncMemory.extract``: proposals from a conversation."""
        return self._run(self._async.extract(messages))

    def history(self, memory_id: str) -> list[MemoryVersion]:
        """See ``AsyncMemory.history``."""
        return self._run(self._async.history(memory_id))

    def context(
        self, prompt: str, *, model: str | ModelProvider, budget: int | None = None
    ) -> AssembledContext:
        """See ``AsyncMemory.context``."""
        return self._run(self._async.context(prompt, model=model, budget=budget))

    def close(self) -> None:
        """Close the store (unless you handed the facade in) and stop the loop thread."""
        if self._loop.closed:
            return
        try:
            self._loop.run(self._async.close())
        finally:
            self._loop.stop()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.run(coro)
