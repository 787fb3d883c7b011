"""Turning facade results into JSON objects and terminal text."""

from __future__ import annotations

import json
from datetime import datetime

import click

from kairox.core.clock import isoformat
from kairox.core.events import StoredEvent
from kairox.core.records import MemoryRecord, version_label
from kairox.core.terminal import json_escaped, visible
from kairox.core.types import MemoryStatus

JSONValue = object


def _ts(moment: datetime | None) -> str | None:
    return isoformat(moment) if moment else None


def event_json(event: StoredEvent) -> dict[str, JSONValue]:
    return {
        "seq": event.seq,
        "type": event.type,
        "ts": _ts(event.ts),
        "session_id": event.session_id,
        "workspace_id": event.workspace_id,
        "payload": event.payload.model_dump(mode="json"),
    }


def echo_json(value: JSONValue) -> None:
    click.echo(json_escaped(json.dumps(value, ensure_ascii=False, indent=2)))


UNTRUSTED_MARK = "⚠"
MEMORY_HEADER = f"{'ID':<26}    {'SCOPE':<9} {'STATUS':<8} {'KEY':<24} BODY"


def memory_line(record: MemoryRecord) -> str:
    """One row; the marker column holds ⚠ for a memory proposed after untrusted input."""
    key = record.key or "-"
    mark = UNTRUSTED_MARK if record.untrusted_inputs else " "
    body = f"delete: {record.body}" if record.forget else record.body
    return (
        f"{record.id:<26}  {mark} {record.scope.value:<9} {record.status.value:<8} {key:<24} "
        f"{visible(body, one_line=True)}"
    )


def untrusted_line(record: MemoryRecord) -> str | None:
    """The warning shown wherever a decision is made, or None for an untainted memory. A
    session memory the policy accepted with its taint says how to forget it."""
    if not record.untrusted_inputs:
        return None
    refs = visible(", ".join(u.describe() for u in record.untrusted_inputs), one_line=True)
    if record.status is MemoryStatus.ACCEPTED and record.carries_taint:
        advice = f"forget it with `kairox memory delete {record.id}`"
    else:
        advice = "check it before approving"
    return f"{UNTRUSTED_MARK} proposed after untrusted input ({refs}); {advice}"


def refusal_line(record: MemoryRecord) -> str | None:
    """Why a memory was rejected (and by whom), or None for one that was not."""
    if record.status is not MemoryStatus.REJECTED:
        return None
    who = record.decided_by.value if record.decided_by else "user"
    reason = visible(record.decision_reason or "no reason given", one_line=True)
    return f"rejected by {who}: {reason}"


def memory_detail(record: MemoryRecord) -> list[str]:
    """``memory show``: every field a decision needs, provenance included."""
    lines = [
        f"id:        {record.id}",
        f"scope:     {record.scope.value}",
        f"key:       {record.key or '-'}",
        f"status:    {record.status.value}"
        + (
            f" (version {record.version})"
            if version_label(record.version, record.status) != "-"
            else ""
        ),
        f"proposed:  session {record.proposed_session_id or '-'}, turn "
        f"{record.proposed_turn if record.proposed_turn is not None else '-'}",
        f"untrusted: {len(record.untrusted_inputs) or 'none'}",
    ]
    lines += [f"  - {visible(u.describe(), one_line=True)}" for u in record.untrusted_inputs]
    refused = refusal_line(record)
    if refused:
        lines.append(f"reason:    {refused}")
    if record.forget:
        lines.append("proposes: deleting this memory (approving deletes it)")
    elif record.replaces_body is not None:
        replaced = visible(record.replaces_body, one_line=True)
        lines.append(f"replaces: {replaced}  (approving makes a new version of it)")
    warning = untrusted_line(record)
    if warning:
        lines.append(warning)
    lines += ["", visible(record.body)]
    return lines
