"""Approving a proposal to delete a memory (an agent's ``memory_delete`` over MCP).

The key's accepted memory is deleted, and the proposal folds into it like an approved
replacement: its id resolves to the deleted memory, whose history shows the proposal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kairox.core.clock import isoformat
from kairox.core.errors import MemoryDecisionError
from kairox.core.events import MemoryDeleted
from kairox.core.records import MemoryRecord
from kairox.core.types import Actor, MemoryScope, MemoryStatus
from kairox.store.memory_rows import insert_version
from kairox.store.sql import SqlConnection, SqlRow

if TYPE_CHECKING:
    from kairox.store.memories import SqlMemoryStore


def accept_forget(
    store: SqlMemoryStore, conn: SqlConnection, row: SqlRow, actor: Actor
) -> MemoryRecord:
    """Inside ``store``'s write transaction: delete the key's memory for the proposal ``row``."""
    target = store._live(conn, MemoryScope(row["scope"]), row["owner"], row["key"])
    if target is None:
        raise MemoryDecisionError(row["id"], "deleted", "approve")
    now = isoformat(store.clock.now())
    version = int(target["version"]) + 1
    conn.execute(
        "UPDATE memories SET status = 'deleted', version = ?, updated_at = ? WHERE id = ?",
        (version, now, target["id"]),
    )
    conn.execute("DELETE FROM memories WHERE id = ?", (row["id"],))
    conn.execute(
        "INSERT INTO memory_redirects(from_id, to_id) VALUES (?, ?)", (row["id"], target["id"])
    )
    event = store._append(
        MemoryDeleted(
            memory_id=target["id"], version=version, decided_by=actor, proposal_id=row["id"]
        ),
        session_id=target["session_id"],
        workspace_id=target["workspace_id"],
    )
    insert_version(
        conn,
        target["id"],
        version,
        "delete",
        target["body"],
        MemoryStatus.DELETED,
        actor,
        event,
        now,
        source=row["id"],
    )
    return store.get(str(target["id"]))
