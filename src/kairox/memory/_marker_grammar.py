"""The vocabulary of the ``<memory>`` protocol and the verdict on one complete marker.

The streaming state machine (:mod:`kairox.memory._marker_stream`) only decides *where* a marker
is; this module alone decides *what* it says and whether it is acceptable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, NamedTuple

from kairox.core.errors import InvalidInput
from kairox.core.names import check_name
from kairox.core.types import MemoryScope


@dataclass(frozen=True, slots=True)
class MemoryMarker:
    """A valid memory proposal; ``body`` is trimmed and ``raw`` is the marker as written."""

    scope: MemoryScope
    key: str | None
    body: str
    raw: str


@dataclass(frozen=True, slots=True)
class RejectedMarker:
    """A marker removed from the visible text but not proposed, with a one-line reason."""

    raw: str
    reason: str


class ParseResult(NamedTuple):
    """What a parse, or one ``feed``/``close`` call, produced (a NamedTuple: made per delta)."""

    visible: str
    markers: list[MemoryMarker]
    rejected: list[RejectedMarker]


OPEN: Final = "<memory"
CLOSE: Final = "</memory>"
# A close tag may carry a little whitespace before its ">" (models write "</memory >").
CLOSE_PATTERN: Final = re.compile(r"</memory[ \t\r\n\f\v]{0,16}>")
CLOSE_MAX: Final = len("</memory") + 16 + 1
# Bounds that stop a marker whose end never comes from holding back the rest of the reply.
MAX_TAG: Final = 512
MAX_BODY: Final = 4000

_SCOPES: Final = ", ".join(scope.value for scope in MemoryScope)
_SCOPE_BY_VALUE: Final = {scope.value: scope for scope in MemoryScope}
_ALLOWED: Final = ("scope", "key")

# One attribute: at least one space, a name, `=` (spaces allowed around it), a quoted value.
_ATTR: Final = re.compile(r"""\s+([^\s="'<>/]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
# What follows the well-formed attributes when the tag is malformed; only used to explain why.
_BAD_ATTR: Final = re.compile(r"""\s+([^\s="'<>/]+)\s*(=?)\s*(.?)""")

REASON_UNCLOSED_TAG: Final = "unclosed <memory> tag (no '>' in time); the text after it is kept"
REASON_UNCLOSED_BODY: Final = "unclosed <memory> marker (no '</memory>' in time); its text is kept"
REASON_EMPTY: Final = "empty <memory> body"
REASON_SELF_CLOSING: Final = (
    "self-closing <memory/> tag has no body; write <memory ...>text</memory>"
)
REASON_NESTED: Final = "nested <memory> tag inside a marker body"


def judge(tag: str, rest: str, close_len: int) -> MemoryMarker | RejectedMarker:
    """Decide on one marker: ``tag`` runs from ``<memory`` to ``>``, ``rest`` is the raw body
    followed by its close tag, which is ``close_len`` characters long."""
    body = rest[:-close_len].strip()
    if not body:
        return RejectedMarker(tag + rest, REASON_EMPTY)
    checked = _check(tag, body)
    if isinstance(checked, str):
        return RejectedMarker(tag + rest, checked)
    scope, key = checked
    return MemoryMarker(scope, key, body, tag + rest)


def _check(tag: str, body: str) -> tuple[MemoryScope, str | None] | str:
    """``(scope, key)``, or the reason to reject. Checks run in this order, the first failure
    wins: tag syntax, unknown or duplicate attributes, missing scope, unknown scope, missing key
    for user/workspace memory, and last a ``<memory`` nested inside the body."""
    attrs = _parse_attributes(tag[len(OPEN) : -1])
    if isinstance(attrs, str):
        return attrs
    unknown = [name for name in attrs if name not in _ALLOWED]
    if unknown:
        return f"unknown attribute '{unknown[0]}' (allowed: scope, key)"
    raw_scope = attrs.get("scope")
    if raw_scope is None:
        return f"missing scope attribute (one of {_SCOPES})"
    scope = _SCOPE_BY_VALUE.get(raw_scope.strip())
    if scope is None:
        return f"scope '{raw_scope.strip()}' is not one of {_SCOPES}"
    key = (attrs.get("key") or "").strip() or None
    if key is None and scope is not MemoryScope.SESSION:
        return f"{scope.value} memory needs a key"
    if key is not None:
        try:
            check_name(key, what="the key")
        except InvalidInput as exc:
            return str(exc)
    if OPEN in body:
        return REASON_NESTED
    return scope, key


def _parse_attributes(inner: str) -> dict[str, str] | str:
    """Parse what sits between ``<memory`` and ``>``: a dict, or the reason it is malformed."""
    attrs: dict[str, str] = {}
    pos = 0
    while (match := _ATTR.match(inner, pos)) is not None:
        name = match.group(1)
        if name in attrs:
            return f"duplicate attribute '{name}'"
        value = match.group(2)
        attrs[name] = value if value is not None else match.group(3)
        pos = match.end()
    rest = inner[pos:]
    if not rest.strip():
        return attrs
    if pos == 0 and not rest[0].isspace():
        return "malformed <memory> tag: expected a space or '>' right after '<memory'"
    bad = _BAD_ATTR.match(rest)
    if bad is None:
        return f"malformed <memory> tag: unexpected '{_snippet(rest)}'"
    name, equals, first = bad.groups()
    if not equals:
        return f"attribute '{name}' has no value; write {name}=\"...\""
    if first in ("'", '"'):
        return f"unterminated quoted value for attribute '{name}' (values cannot contain '>')"
    return f"attribute '{name}' needs a quoted value; write {name}=\"...\""


def _snippet(text: str) -> str:
    return " ".join(text.split())[:24]
