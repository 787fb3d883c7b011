"""How ``KairoxStore`` maps LangGraph's namespaces, keys, values and filters onto memories.

A namespace is a Kairox place (scope and session) plus a path: ``("user",)``,
``("workspace",)`` and ``("session", NAME)`` are the three scopes themselves (empty path); any
other namespace is a path kept inside the scope the store is configured with. The path lives in
the memory key (``ns:["memories","u1","fact"]``), so the one (scope, owner, key) identity keeps
versions, approval, export and undo working for every namespace.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import MatchCondition

from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope

Namespace = tuple[str, ...]
PATH_KEY_PREFIX = "ns:"
INDEX_FIELD = "$kairox_index"
"""Where a body keeps ``put(..., index=False | [fields])`` (stripped from the value read back)."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where a namespace's items live: a scope, its session (by name), the path inside it."""

    scope: MemoryScope
    session: str | None
    path: Namespace


def place_of(namespace: Namespace, default: MemoryScope) -> Place:
    match namespace:
        case ("user",):
            return Place(MemoryScope.USER, None, ())
        case ("workspace",):
            return Place(MemoryScope.WORKSPACE, None, ())
        case ("session", str(name)) if name.strip():
            return Place(MemoryScope.SESSION, name, ())
    return Place(default, None, tuple(namespace))


def memory_key(path: Namespace, key: str) -> str:
    """The memory key of ``key`` at ``path``; a plain key stays as it is."""
    if not path and key and not key.startswith(PATH_KEY_PREFIX):
        return key
    return PATH_KEY_PREFIX + json.dumps([*path, key], ensure_ascii=False, separators=(",", ":"))


def split_key(stored: str) -> tuple[Namespace, str]:
    """The (path, key) a memory key stands for (``memory_key`` reversed)."""
    if stored.startswith(PATH_KEY_PREFIX + "["):
        try:
            parts = json.loads(stored[len(PATH_KEY_PREFIX) :])
        except ValueError:
            parts = None
        if isinstance(parts, list) and parts and all(isinstance(p, str) for p in parts):
            return tuple(parts[:-1]), parts[-1]
    return (), stored


def namespace_of(record: MemoryRecord, session_name: str | None) -> tuple[Namespace, str]:
    """The LangGraph namespace and key of a memory."""
    path, key = split_key(record.key or record.id)
    if path:
        return path, key
    if record.scope is MemoryScope.SESSION:
        return ("session", session_name or record.session_id or ""), key
    return (record.scope.value,), key


# -- values ------------------------------------------------------------------------------------


def body_of(value: Mapping[str, Any], index: bool | Sequence[str] | None) -> str:
    """The memory body of a value: ``{"content": text}`` is the text, anything else JSON."""
    content = value.get("content")
    plain = set(value) == {"content"} and isinstance(content, str)
    if plain and index is None and content and not _looks_like_json(content):
        return str(content)
    data = dict(value)
    if index is not None:
        data[INDEX_FIELD] = index if isinstance(index, bool) else list(index)
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def value_of(body: str) -> tuple[dict[str, Any], bool | list[str] | None]:
    """The value a body holds and the put's ``index`` choice (None: the store's default)."""
    if _looks_like_json(body):
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            index = parsed.pop(INDEX_FIELD, None)
            return parsed, index if isinstance(index, bool | list) else None
    return {"content": body}, None


def _looks_like_json(text: str) -> bool:
    return text.lstrip().startswith("{")


# -- filters and namespace conditions ----------------------------------------------------------

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def matches_filter(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    """LangGraph's filter: each key equals its value, or meets ``{"$op": operand}``."""
    for key, wanted in conditions.items():
        actual = _at(value, key)
        if isinstance(wanted, Mapping) and wanted and all(k in _OPERATORS for k in wanted):
            if not all(_compare(actual, op, operand) for op, operand in wanted.items()):
                return False
        elif actual != wanted:
            return False
    return True


_MISSING = object()


def _at(value: Mapping[str, Any], path: str) -> Any:
    """The field a filter key names: a top-level key, else a dotted path into nested dicts."""
    if path in value:
        return value[path]
    current: Any = value
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _compare(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if actual is _MISSING:
        return False
    try:
        if op == "$gt":
            return bool(actual > operand)
        if op == "$gte":
            return bool(actual >= operand)
        if op == "$lt":
            return bool(actual < operand)
        return bool(actual <= operand)  # $lte
    except TypeError:  # None or a value of another type never orders
        return False


def matches_condition(namespace: Namespace, condition: MatchCondition) -> bool:
    """A ``list_namespaces`` prefix or suffix condition (``"*"`` matches any one label)."""
    path = tuple(condition.path)
    if not path:
        return True
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
