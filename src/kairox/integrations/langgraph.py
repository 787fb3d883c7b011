"""``KairoxStore``: LangGraph's ``BaseStore`` over Kairox memories (``pip install
"kairox[langgraph]"``).

Any namespace works. ``("user",)``, ``("workspace",)`` and ``("session", NAME)`` are the Kairox
scopes themselves; any other namespace (LangMem's ``("memories", USER_ID)``) is kept as a path
inside the scope the store is configured with (``scope="user"`` by default). An item is a memory:
``{"content": text}`` is stored as the plain text, any other value as JSON. A put is the caller's
own write (accepted at once) or, with ``approval="required"``, a proposal the user approves in
the CLI, TUI or web UI before any ``get`` or ``search`` returns it.

``search(query=...)`` ranks every matching item, as LangGraph does: with LangGraph's ``index``
config (``{"dims", "embed", "fields"}``) by the cosine similarity of those embeddings, otherwise
by Kairox's memory ranker (scores in [0, 1]; ``min_score`` sets a floor, none by default).
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    ensure_embeddings,
    get_text_at_path,
)

from kairox.api import AsyncMemory, LoopThread
from kairox.core.errors import InvalidInput, NotFound
from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.integrations.langgraph_items import (
    Namespace,
    Place,
    body_of,
    cosine,
    matches_condition,
    matches_filter,
    memory_key,
    namespace_of,
    place_of,
    value_of,
)

Approval = Literal["direct", "required"]
_LIVE = (MemoryStatus.ACCEPTED,)
_EVERY = 1_000_000  # rank every visible memory; the prefix's own are picked out after


class KairoxStore(BaseStore):
    """A LangGraph store whose items are the memories of one Kairox home and workspace.

    ``workspace`` defaults to the current directory and ``home`` to the CLI's; ``approval``
    is ``"direct"`` (a put is accepted) or ``"required"`` (a put is a proposal that waits for
    the user; deleting a user or workspace memory is then the user's decision too); ``scope``
    (``"user"`` or ``"workspace"``) holds the namespaces that are not a Kairox scope; ``index``
    is LangGraph's index config; ``min_score`` drops query hits Kairox's ranker scores lower.
    """

    __slots__ = (
        "_approval",
        "_fields",
        "_loop",
        "_memory",
        "_min",
        "_owns",
        "_scope",
        "_vectors",
        "embeddings",
        "index_config",
    )

    def __init__(
        self,
        *,
        workspace: str | Path | None = None,
        approval: Approval = "direct",
        home: str | Path | None = None,
        memory: AsyncMemory | None = None,
        scope: Literal["user", "workspace"] = "user",
        index: IndexConfig | None = None,
        min_score: float = 0.0,
    ) -> None:
        if approval not in ("direct", "required"):
            raise InvalidInput(f"approval must be 'direct' or 'required', got {approval!r}")
        if scope not in ("user", "workspace"):
            raise InvalidInput(f"scope must be 'user' or 'workspace', got {scope!r}")
        self._approval = approval
        self._scope = MemoryScope(scope)
        self._min = min_score
        self.index_config = index
        config: dict[str, Any] = dict(index or {})
        self.embeddings = ensure_embeddings(config["embed"]) if config.get("embed") else None
        fields = config.get("fields") or config.get("text_fields") or ["$"]
        self._fields: builtins.list[str] = list(fields)
        self._vectors: dict[str, builtins.list[float]] = {}  # text -> its embedding
        self._loop = LoopThread("kairox-langgraph-store", owner="KairoxStore")
        self._owns = memory is None
        self._memory = memory if memory is not None else AsyncMemory(home, workspace=workspace)

    def close(self) -> None:
        """Close the store's memory (unless you handed it in) and its loop thread."""
        if self._loop.closed:
            return
        try:
            if self._owns:
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
        place = place_of(op.namespace, self._scope)
        record = await self._find(place, op.key)
        if record is None:
            return None
        value, _index = value_of(record.body)
        return Item(
            value=value,
            key=op.key,
            namespace=tuple(op.namespace),
            created_at=record.created_at,
            updated_at=record.updated_at,
        )

    async def _put(self, op: PutOp) -> None:
        place = place_of(op.namespace, self._scope)
        if op.value is None:
            record = await self._find(place, op.key)
            if record is None:
                return
            if self._approval == "required" and place.scope is not MemoryScope.SESSION:
                raise InvalidInput(
                    f"deleting the {place.scope.value} memory '{op.key}' is the user's decision "
                    f"with approval='required'; run `kairox memory delete {record.id}`"
                )
            await self._memory.delete(record.id)
            return
        index = op.index if op.index is None or isinstance(op.index, bool) else list(op.index)
        await self._memory.add(
            body_of(op.value, index),
            scope=place.scope,
            key=memory_key(place.path, op.key),
            session=place.session,
            propose=self._approval == "required",
        )

    async def _search(self, op: SearchOp) -> builtins.list[SearchItem]:
        found: builtins.list[tuple[Namespace, str, MemoryRecord, dict[str, Any], Any]] = []
        for namespace, key, record in await self._under(op.namespace_prefix):
            value, index = value_of(record.body)
            if op.filter and not matches_filter(value, op.filter):
                continue
            found.append((namespace, key, record, value, index))
        scores: dict[str, float] = {}
        if op.query and found:
            scores = await self._scores(op.query, [(r, v, i) for _n, _k, r, v, i in found])
            found.sort(key=lambda f: -scores[f[2].id] if f[2].id in scores else 1.0)
        else:
            found.sort(key=lambda f: f[2].updated_at, reverse=True)
        items = [
            SearchItem(n, k, v, r.created_at, r.updated_at, scores.get(r.id) if op.query else None)
            for n, k, r, v, _i in found
        ]
        return items[op.offset : op.offset + op.limit]

    async def _namespaces(self, op: ListNamespacesOp) -> builtins.list[Namespace]:
        seen: dict[Namespace, None] = {}
        for namespace, _key, _record in await self._under(()):
            if all(matches_condition(namespace, c) for c in op.match_conditions or ()):
                depth = op.max_depth
                seen[namespace[:depth] if depth is not None else namespace] = None
        ordered = sorted(seen)
        return ordered[op.offset : op.offset + op.limit]

    # -- ranking -----------------------------------------------------------------------------

    async def _scores(
        self, query: str, found: Sequence[tuple[MemoryRecord, dict[str, Any], Any]]
    ) -> dict[str, float]:
        """A score for each indexed item (``index=False`` ones get none and rank last)."""
        indexed = [(r, v, self._fields if i is None or i is True else i) for r, v, i in found]
        indexed = [(r, v, f) for r, v, f in indexed if f is not False]
        if not indexed:
            return {}
        if self.embeddings is not None:
            return await asyncio.to_thread(self._embedded_scores, query, indexed)
        hits = await self._memory.facade.memory.search(
            query,
            workspace=self._memory.workspace,
            k=_EVERY,
            statuses=_LIVE,
            all_sessions=True,
            min_score=self._min,
        )
        wanted = {r.id for r, _v, _f in indexed}
        scores = {h.record.id: h.score for h in hits if h.record.id in wanted}
        if self._min <= 0:
            scores.update((rid, 0.0) for rid in wanted if rid not in scores)
        return scores

    def _embedded_scores(
        self, query: str, indexed: Sequence[tuple[MemoryRecord, dict[str, Any], Any]]
    ) -> dict[str, float]:
        assert self.embeddings is not None
        texts: builtins.list[str] = []
        owners: builtins.list[str] = []
        for record, value, fields in indexed:
            for field in fields:
                for text in get_text_at_path(value, field):
                    texts.append(text)
                    owners.append(record.id)
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            self._vectors.update(
                zip(missing, self.embeddings.embed_documents(missing), strict=True)
            )
        vectors = [self._vectors[t] for t in texts]
        wanted = self.embeddings.embed_query(query)
        scores: dict[str, float] = {}
        for owner, vector in zip(owners, vectors, strict=True):
            scores[owner] = max(scores.get(owner, -1.0), cosine(wanted, vector))
        return scores

    # -- reading memories --------------------------------------------------------------------

    async def _under(self, prefix: Namespace) -> builtins.list[tuple[Namespace, str, MemoryRecord]]:
        """Every live item whose namespace starts with ``prefix``, as (namespace, key, record)."""
        place = place_of(prefix, self._scope) if prefix else None
        session = place.session if place is not None else None
        session_id = await self._existing_session(session) if session is not None else None
        if session is not None and session_id is None:
            return []
        records = await self._memory.facade.memory.list(
            workspace=self._memory.workspace,
            session=session_id,
            statuses=_LIVE,
            all_sessions=session is None,
        )
        names = await self._session_names(records)
        out = []
        for record in records:
            namespace, key = namespace_of(record, names.get(record.session_id or ""))
            if namespace[: len(prefix)] == tuple(prefix):
                out.append((namespace, key, record))
        return out

    async def _find(self, place: Place, key: str) -> MemoryRecord | None:
        session_id: str | None = None
        if place.session is not None:
            session_id = await self._existing_session(place.session)
            if session_id is None:
                return None
        wanted = memory_key(place.path, key)
        records = await self._memory.facade.memory.list(
            workspace=self._memory.workspace,
            session=session_id,
            scopes=[place.scope],
            statuses=_LIVE,
        )
        return next((r for r in records if r.key == wanted and r.scope is place.scope), None)

    async def _existing_session(self, name: str) -> str | None:
        """The id of the session ``name`` (reading never starts a session)."""
        try:
            info = await self._memory.facade.sessions.resolve(
                name, workspace=self._memory.workspace
            )
        except NotFound:
            return None
        return info.id

    async def _session_names(self, records: Sequence[MemoryRecord]) -> dict[str, str]:
        ids = {r.session_id for r in records if r.scope is MemoryScope.SESSION and r.session_id}
        names: dict[str, str] = {}
        for session_id in ids:
            names[session_id] = (await self._memory.facade.sessions.get(session_id)).name
        return names
