"""Access tokens for the shared MCP server, on either backend: stored by SHA-256, never in clear.

A token is bound to the workspaces it names and may be read-only; ``last_used_at`` is what
``kairox tokens list`` shows. The same SQL serves SQLite and Postgres.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from kairox.core.clock import Clock, isoformat, parse_iso
from kairox.core.errors import InvalidInput, NotFound
from kairox.store.sql import SqlDatabase, SqlRow


@dataclass(frozen=True, slots=True)
class TokenWorkspace:
    id: str
    path: str


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """One access token, without its secret."""

    name: str
    workspaces: tuple[TokenWorkspace, ...]
    read_only: bool
    created_at: datetime
    last_used_at: datetime | None

    def allows(self, workspace_id: str) -> bool:
        return any(w.id == workspace_id for w in self.workspaces)


class SqlTokenStore:
    def __init__(self, db: SqlDatabase, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def create(
        self,
        name: str,
        token_hash: str,
        *,
        workspaces: Sequence[TokenWorkspace],
        read_only: bool,
    ) -> TokenInfo:
        listed = json.dumps([{"id": w.id, "path": w.path} for w in workspaces])
        with self.db.atomic() as conn:
            if conn.execute("SELECT 1 FROM access_tokens WHERE name = ?", (name,)).fetchone():
                raise InvalidInput(
                    f"a token named '{name}' exists; revoke it first (kairox tokens revoke {name})"
                )
            conn.execute(
                "INSERT INTO access_tokens(name, token_hash, workspaces, read_only, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (name, token_hash, listed, int(read_only), isoformat(self.clock.now())),
            )
        return self.get(name)

    def get(self, name: str) -> TokenInfo:
        row = self.db.query_one("SELECT * FROM access_tokens WHERE name = ?", (name,))
        if row is None:
            raise NotFound("token", name, by="name")
        return _info(row)

    def list(self) -> list[TokenInfo]:
        return [_info(r) for r in self.db.query("SELECT * FROM access_tokens ORDER BY name")]

    def by_hash(self, token_hash: str) -> TokenInfo | None:
        row = self.db.query_one("SELECT * FROM access_tokens WHERE token_hash = ?", (token_hash,))
        return _info(row) if row is not None else None

    def revoke(self, name: str) -> TokenInfo:
        with self.db.atomic() as conn:
            row = conn.execute("SELECT * FROM access_tokens WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise NotFound("token", name, by="name", hint="kairox tokens list shows them")
            conn.execute("DELETE FROM access_tokens WHERE name = ?", (name,))
        return _info(row)

    def touch(self, name: str) -> None:
        """Record a use of the token now."""
        with self.db.atomic() as conn:
            conn.execute(
                "UPDATE access_tokens SET last_used_at = ? WHERE name = ?",
                (isoformat(self.clock.now()), name),
            )


def _time(value: object) -> datetime | None:
    return parse_iso(str(value)) if value else None


def _info(row: SqlRow) -> TokenInfo:
    created = _time(row["created_at"])
    assert created is not None
    return TokenInfo(
        name=str(row["name"]),
        workspaces=tuple(
            TokenWorkspace(id=str(w["id"]), path=str(w["path"]))
            for w in json.loads(row["workspaces"])
        ),
        read_only=bool(row["read_only"]),
        created_at=created,
        last_used_at=_time(row["last_used_at"]),
    )
