"""Access tokens of the shared MCP server: created (the secret shown once), listed, revoked,
and checked on every request. Only the token's SHA-256 is stored."""

from __future__ import annotations

import builtins
import hashlib
import secrets
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from kairox.core.aio import blocking, shielded
from kairox.core.errors import InvalidInput
from kairox.core.ids import workspace_id_for
from kairox.core.names import check_name
from kairox.services import Services
from kairox.store.tokens import TokenInfo, TokenWorkspace

TOKEN_PREFIX = "kxt_"
# A use is recorded at most this often per token, so a busy client does not write on every call.
TOUCH_EVERY = timedelta(seconds=30)


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


class TokensArea:
    def __init__(self, services: Services) -> None:
        self._s = services

    async def create(
        self, name: str, *, workspaces: Sequence[str | Path], read_only: bool = False
    ) -> tuple[TokenInfo, str]:
        """A new token for ``workspaces``; returns it with its secret, which is never stored."""
        check_name(name, what="a token name")
        if not workspaces:
            raise InvalidInput("a token needs at least one workspace (--workspace DIR)")
        bound = await blocking(_bound, workspaces)
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        info = await shielded(
            self._s.tokens.create,
            name,
            token_hash(secret),
            workspaces=tuple(dict.fromkeys(bound)),
            read_only=read_only,
        )
        return info, secret

    async def list(self) -> builtins.list[TokenInfo]:
        return await blocking(self._s.tokens.list)

    async def revoke(self, name: str) -> TokenInfo:
        return await shielded(self._s.tokens.revoke, name)

    async def authenticate(self, secret: str) -> TokenInfo | None:
        """The token ``secret`` is, or None; records the use (at most every 30 s per token)."""
        if not secret.startswith(TOKEN_PREFIX):
            return None
        info = await blocking(self._s.tokens.by_hash, token_hash(secret))
        if info is None:
            return None
        now = self._s.clock.now()
        if info.last_used_at is None or now - info.last_used_at >= TOUCH_EVERY:
            await shielded(self._s.tokens.touch, info.name)
        return info


def _bound(workspaces: Sequence[str | Path]) -> list[TokenWorkspace]:
    roots = [Path(w).expanduser().resolve() for w in workspaces]
    return [TokenWorkspace(id=workspace_id_for(root), path=str(root)) for root in roots]
