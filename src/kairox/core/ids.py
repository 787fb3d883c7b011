"""Identifiers: time-sortable record ids, and workspace ids derived from the resolved path."""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from pathlib import Path

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def _base32(value: int, width: int) -> str:
    out = []
    for _ in range(width):
        value, rem = divmod(value, 32)
        out.append(_ALPHABET[rem])
    return "".join(reversed(out))


def new_id(prefix: str) -> str:
    """A sortable, collision-resistant id such as ``mem_01hx...``: 48 bits of ms time, 60 random."""
    millis = time.time_ns() // 1_000_000
    return f"{prefix}_{_base32(millis, 10)}{_base32(secrets.randbits(60), 12)}"


def workspace_id_for(path: str | os.PathLike[str]) -> str:
    """The id of a workspace is a hash of its resolved path, so every process agrees on it."""
    resolved = str(Path(path).expanduser().resolve())
    return "ws_" + hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:16]
