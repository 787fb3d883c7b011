"""``KairoxStore``: LangGraph's ``BaseStore`` over Kairox memories (``pip install
"kairox[langgraph]"``).

Namespaces are Kairox scopes: ``("user",)``, ``("workspace",)`` and ``("session", NAME)``. An item
is a memory: its key is the memory key, its value the body (``{"content": text}`` is stored as the
plain text; any other value as JSON). A put is the caller's own write (accepted at once) or, with
``approval="required"``, a proposal the user approves in the CLI, TUI or web UI before any
``get`` or ``search`` returns it. ``search(query=...)`` ranks by meaning, as ``kairox memory
search`` does.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from kairox.api import AsyncMemory, LoopThread
from kairox.core.errors import InvalidInput
from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope, MemoryStatus

Approval = Literal["direct", "required"]
Namespace = tuple[str, ...]
_LIVE = (MemoryStatus.ACCEPTED,)


class KairoxStore(BaseStore):
    """A LangGraph store whose items are the memories of one Kairox home and workspace.

    ``workspace`` defaults to the current directory and ``home`` to the CLI's; ``approval``
    is ``"direct"`` (a put is accepted) or ``"required"`` (a put is a proposal that waits for
    the user; deleting a user or workspace memory is then the user's decision too).
    """

    __slots__ = ("_approval", "_loop", "_memory", "_owns_memory")

    def __init__(
        self,
        *,
        workspace: str | Path | None = None,
        approval: Approval = "direct",
        home: str | Path | None = None,
        memory: AsyncMemory | None = None,
    ) -> None:
        if approval not in ("direct", "required"):
            raise InvalidInput(f"approval must be 'direct' or 'required', got {approval!r}")
        self._approval = approval
        self._loop = LoopThread("kairox-langgraph-store", owner="KairoxStore")
        self._owns_memory = memory is None
        self._memory = memory if memory is not None else AsyncMemory(home, workspace=workspace)

    def close(self) -> None:
        """Close the store's memory (unless you handed it in) and its loop thread."""
        if self._loop.closed:
            return
        try:
            if self._owns_memory:
                self._loop.run(self._memory.close())
        finally:
            self._loop.stop()

    # -- BaseStore ---------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> builtins.list[Result]:
        return self._loop.run(self._batch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> builtins.list[Result]:
        return await self._loop.arun(self._batch(list(ops)))

    async def _batch(self, ops: builtins.list[Op]) -> builtins.list[Result]:
        results: builtins.list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._namespaces(op))
            else:  # pragma: no cover - LangGraph has no other operation
                raise InvalidInput(f"unknown store operation {type(op).__name__}")
        return results

    # -- operations --------------------------------------------------------------------------

    async def _get(self, op: GetOp) -> Item | None:
        record = await self._find(op.namespace, op.key)
        return None if record is None else _item(op.namespace, record)

    async def _put(self, op: PutOp) -> None:
        scope, session = _scope_of(op.namespace)
        if op.value is None:
            record = await self._find(op.namespace, op.key)
            if record is None:
                return
            if self._approval == "required" and scope is not MemoryScope.SESSION:
                raise InvalidInput(
                    f"deleting the {scope.value} memory '{op.key}' is the user's decision "
                    f"with approval='required'; run `kairox memory delete {record.id}`"
                )
            await self._memory.delete(record.id)
            return
        await self._memory.add(
            _body(op.value),
            scope=scope,
            key=op.key,
            session=session,
            propose=self._approval == "required",
        )

    async def _search(self, op: SearchOp) -> builtins.list[SearchItem]:
        scopes, session = _scopes_under(op.namespace_prefix)
        wanted = op.limit + op.offset
        facade = self._memory.facade
        found: builtins.list[tuple[MemoryRecord, float | None]]
        if op.query:
            hits = await facade.memory.search(
                op.query,
                workspace=self._memory.workspace,
                session=await self._session(session),
                scopes=scopes,
                k=max(wanted * 4, 10) if op.filter else wanted,
                statuses=_LIVE,
                all_sessions=session is None,
            )
            found = [(hit.record, hit.score) for hit in hits]
        else:
            records = await self._list(scopes, session)
            found = [(record, None) for record in records]
        items: builtins.list[SearchItem] = []
        for record, score in found:
            namespace = await self._namespace_of(record)
            if namespace[: len(op.namespace_prefix)] != op.namespace_prefix:
                continue
            value = _value(record.body)
            if op.filter and any(value.get(k) != v for k, v in op.filter.items()):
                continue
            items.append(_search_item(namespace, record, score))
        return items[op.offset : op.offset + op.limit]

    async def _namespaces(self, op: ListNamespacesOp) -> builtins.list[Namespace]:
        seen: dict[Namespace, None] = {}
        for record in await self._list(None, None):
            namespace = await self._namespace_of(record)
            if all(_matches(namespace, c) for c in op.match_conditions or ()):
                depth = op.max_depth
                seen[namespace[:depth] if depth is not None else namespace] = None
        ordered = sorted(seen)
        return ordered[op.offset : op.offset + op.limit]

    # -- helpers -----------------------------------------------------------------------------

    async def _session(self, name: str | None) -> str | None:
        if name is None:
            return None
        info = await self._memory.facade.sessions.ensure(name, workspace=self._memory.workspace)
        return info.name

    async def _list(
        self, scopes: Sequence[MemoryScope] | None, session: str | None
    ) -> builtins.list[MemoryRecord]:
        return await self._memory.facade.memory.list(
            workspace=self._memory.workspace,
            session=await self._session(session),
            scopes=scopes,
            statuses=_LIVE,
            all_sessions=session is None,
        )

    async def _find(self, namespace: Namespace, key: str) -> MemoryRecord | None:
        scope, session = _scope_of(namespace)
        for record in await self._list([scope], session):
            if record.key == key and record.scope is scope:
                return record
        return None

    async def _namespace_of(self, record: MemoryRecord) -> Namespace:
        if record.scope is not MemoryScope.SESSION:
            return (record.scope.value,)
        assert record.session_id is not None
        info = await self._memory.facade.sessions.get(record.session_id)
        return ("session", info.name)


def _scope_of(namespace: Namespace) -> tuple[MemoryScope, str | None]:
    """The scope (and session name) a namespace stands for; anything else is refused."""
    match namespace:
        case ("user",):
            return MemoryScope.USER, None
        case ("workspace",):
            return MemoryScope.WORKSPACE, None
        case ("session", str(name)) if name.strip():
            return MemoryScope.SESSION, name
    raise InvalidNamespaceError(
        f"namespace {namespace!r} is not a Kairox scope; use ('user',), ('workspace',) "
        "or ('session', NAME)"
    )


def _scopes_under(prefix: Namespace) -> tuple[builtins.list[MemoryScope] | None, str | None]:
    """The scopes (and session) a search prefix covers: () covers all of them."""
    if not prefix:
        return None, None
    if prefix == ("session",):
        return [MemoryScope.SESSION], None
    scope, session = _scope_of(prefix)
    return [scope], session


def _matches(namespace: Namespace, condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


def _body(value: Mapping[str, Any]) -> str:
    content = value.get("content")
    if set(value) == {"content"} and isinstance(content, str) and not _looks_like_json(content):
        return content
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _value(body: str) -> dict[str, Any]:
    if _looks_like_json(body):
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    return {"content": body}


def _looks_like_json(text: str) -> bool:
    return text.lstrip().startswith("{")


def _times(record: MemoryRecord) -> tuple[datetime, datetime]:
    return record.created_at, record.updated_at


def _item(namespace: Namespace, record: MemoryRecord) -> Item:
    created, updated = _times(record)
    assert record.key is not None or record.scope is MemoryScope.SESSION
    return Item(
        value=_value(record.body),
        key=record.key or record.id,
        namespace=namespace,
        created_at=created,
        updated_at=updated,
    )


def _search_item(namespace: Namespace, record: MemoryRecord, score: float | None) -> SearchItem:
    created, updated = _times(record)
    return SearchItem(
        namespace, record.key or record.id, _value(record.body), created, updated, score
    )
