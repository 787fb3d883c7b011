"""Identifiers: time-sortable record ids, and workspace ids derived from the resolved path."""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from pathlib import Path

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


# Every 10-bit value as its two characters: ids are made two characters at a time.
_PAIRS = tuple(a + b for a in _ALPHABET for b in _ALPHABET)


def _base32(value: int, width: int) -> str:
    """``value`` in ``width`` characters of ``_ALPHABET``, most significant first."""
    out = [] if width % 2 == 0 else [_ALPHABET[(value >> (5 * (width - 1))) & 31]]
    for shift in range(10 * (width // 2) - 10, -10, -10):
        out.append(_PAIRS[(value >> shift) & 1023])
    return "".join(out)


def new_id(prefix: str) -> str:
    """A sortable, collision-resistant id such as ``mem_01hx...``: 48 bits of ms time, 60 random."""
    millis = time.time_ns() // 1_000_000
    return f"{prefix}_{_base32(millis, 10)}{_base32(secrets.randbits(60), 12)}"


def looks_like_id(text: str, prefix: str) -> bool:
    """Whether ``text`` has the shape of a ``new_id(prefix)`` id (an id is never a new name)."""
    body = text.removeprefix(f"{prefix}_")
    return body != text and len(body) == 22 and all(c in _ALPHABET for c in body)


def workspace_id_for(path: str | os.PathLike[str]) -> str:
    """The id of a workspace is a hash of its resolved path, so every process agrees on it."""
    resolved = str(Path(path).expanduser().resolve())
    return "ws_" + hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:16]
