"""Rows of the memory tables: reading them into records, resolving ids (redirects and unique
prefixes), and the few queries every writer of ``kairox.store.memories`` shares."""

from __future__ import annotations

import json

from kairox.core.clock import parse_iso
from kairox.core.errors import InvalidInput
from kairox.core.events import UntrustedInput
from kairox.core.records import USER_OWNER, MemoryRecord, MemoryVersion, owner_of
from kairox.core.types import Actor, MemoryScope, MemoryStatus
from kairox.store.sql import SqlConnection, SqlRow


def unique_prefix(conn: SqlConnection, memory_id: str, workspace_id: str | None = None) -> str:
    """The id ``memory_id`` starts (like git: any unique prefix, with or without ``mem_``).
    With ``workspace_id`` the prefix is matched only among the memories that workspace sees
    (the user's and its own), so neither an error nor its ambiguity tells of another's."""
    if (
        not memory_id
        or conn.execute(
            "SELECT 1 FROM memories WHERE id = ? UNION ALL SELECT 1 FROM memory_redirects"
            " WHERE from_id = ?",
            (memory_id, memory_id),
        ).fetchone()
    ):
        return memory_id
    prefix = memory_id if memory_id.startswith("mem_") else f"mem_{memory_id}"
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    visible, params = "", [pattern]
    if workspace_id is not None:
        visible = " AND (scope = 'user' OR workspace_id = ?)"
        params.append(workspace_id)
    found = [
        str(r["id"])
        for r in conn.execute(
            "SELECT id FROM memories WHERE id LIKE ? ESCAPE '\\'"
            + visible
            + " ORDER BY id LIMIT 6",
            params,
        )
    ]
    if len(found) > 1:
        shown = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
        raise InvalidInput(
            f"memory id prefix '{memory_id}' is ambiguous ({shown}); type more of the id"
        )
    return found[0] if found else memory_id


def resolve_id(conn: SqlConnection, memory_id: str) -> str:
    seen = {memory_id}
    current = memory_id
    while True:
        hop = conn.execute(
            "SELECT to_id FROM memory_redirects WHERE from_id = ?", (current,)
        ).fetchone()
        if hop is None or hop["to_id"] in seen:
            return current
        current = hop["to_id"]
        seen.add(current)


SELECT_WITH_REPLACES = (
    "SELECT m.*, CASE WHEN m.status = 'pending' AND m.key IS NOT NULL THEN"
    " (SELECT a.body FROM memories a WHERE a.scope = m.scope AND a.owner = m.owner"
    " AND a.key = m.key AND a.status = 'accepted') END AS replaces_body FROM memories m"
)


def owner_for(scope: MemoryScope, workspace_id: str | None, session_id: str | None) -> str:
    if scope is MemoryScope.USER:
        return USER_OWNER
    if scope is MemoryScope.WORKSPACE:
        return owner_of(scope, workspace_id=workspace_id, session_id=None)
    return owner_of(scope, workspace_id=workspace_id, session_id=session_id)


def identical_row(
    conn: SqlConnection, scope: MemoryScope, owner: str, key: str | None, body: str
) -> SqlRow | None:
    # "key IS ?" is SQLite only; the two spellings below mean the same on both backends.
    same_key = "key IS NULL" if key is None else "key = ?"
    params: tuple[object, ...] = (
        scope.value,
        owner,
        *(() if key is None else (key,)),
        body.strip(),
    )
    row: SqlRow | None = conn.execute(
        f"SELECT id FROM memories WHERE scope = ? AND owner = ? AND {same_key} AND body = ?"
        " AND status IN ('accepted', 'pending') AND forget = 0"
        " ORDER BY status = 'pending' LIMIT 1",
        params,
    ).fetchone()
    return row


def pending_forget(conn: SqlConnection, scope: MemoryScope, owner: str, key: str) -> SqlRow | None:
    """The pending proposal to delete this key's memory, if there is one."""
    row: SqlRow | None = conn.execute(
        "SELECT id FROM memories WHERE scope = ? AND owner = ? AND key = ? AND status = 'pending'"
        " AND forget = 1",
        (scope.value, owner, key),
    ).fetchone()
    return row


def live_row(
    conn: SqlConnection, scope: MemoryScope, owner: str, key: str | None, *, suffix: str = ""
) -> SqlRow | None:
    if key is None:
        return None
    row: SqlRow | None = conn.execute(
        "SELECT * FROM memories WHERE scope = ? AND owner = ? AND key = ? AND status = 'accepted'"
        + suffix,
        (scope.value, owner, key),
    ).fetchone()
    return row


def insert_version(
    conn: SqlConnection,
    memory_id: str,
    version: int,
    action: str,
    body: str,
    status: MemoryStatus,
    actor: Actor,
    event_seq: int,
    at: str,
    *,
    source: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO memory_versions(memory_id, version, action, body, status, actor, event_seq,"
        " changed_at, source_memory_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (memory_id, version, action, body, status.value, actor.value, event_seq, at, source),
    )


def record_of(row: SqlRow) -> MemoryRecord:
    return MemoryRecord(
        id=row["id"],
        scope=MemoryScope(row["scope"]),
        key=row["key"],
        body=row["body"],
        status=MemoryStatus(row["status"]),
        version=int(row["version"]),
        workspace_id=row["workspace_id"],
        session_id=row["session_id"],
        created_at=parse_iso(row["created_at"]),
        updated_at=parse_iso(row["updated_at"]),
        approved_at=parse_iso(row["approved_at"]) if row["approved_at"] else None,
        decided_by=Actor(row["decided_by"]) if row["decided_by"] else None,
        decision_reason=row["decision_reason"],
        proposed_session_id=row["proposed_session_id"],
        proposed_turn=row["proposed_turn"],
        untrusted_inputs=tuple(
            UntrustedInput.model_validate(u) for u in json.loads(row["untrusted_inputs"])
        ),
        replaces_body=row["replaces_body"] if "replaces_body" in row.keys() else None,  # noqa: SIM118
        forget=bool(row["forget"]),
    )


def version_of(row: SqlRow) -> MemoryVersion:
    return MemoryVersion(
        memory_id=row["memory_id"],
        version=int(row["version"]),
        action=row["action"],
        body=row["body"],
        status=MemoryStatus(row["status"]),
        actor=Actor(row["actor"]),
        event_seq=int(row["event_seq"]),
        changed_at=parse_iso(row["changed_at"]),
        source_memory_id=row["source_memory_id"],
        undone=bool(row["undone"]),
    )
