"""Turning facade results into JSON objects and terminal text."""

from __future__ import annotations

import json
from datetime import datetime

import click

from kairox.core.clock import isoformat
from kairox.core.events import StoredEvent
from kairox.core.records import MemoryRecord, MemoryVersion

JSONValue = object


def _ts(moment: datetime | None) -> str | None:
    return isoformat(moment) if moment else None


def memory_json(record: MemoryRecord) -> dict[str, JSONValue]:
    return {
        "id": record.id,
        "scope": record.scope.value,
        "key": record.key,
        "body": record.body,
        "status": record.status.value,
        "version": record.version,
        "workspace_id": record.workspace_id,
        "session_id": record.session_id,
        "created_at": _ts(record.created_at),
        "updated_at": _ts(record.updated_at),
        "approved_at": _ts(record.approved_at),
        "decided_by": record.decided_by.value if record.decided_by else None,
        "decision_reason": record.decision_reason,
        "replaces_body": record.replaces_body,
        "provenance": {
            "session_id": record.proposed_session_id,
            "turn": record.proposed_turn,
            "untrusted_inputs": [u.model_dump(mode="json") for u in record.untrusted_inputs],
        },
    }


def version_json(version: MemoryVersion) -> dict[str, JSONValue]:
    return {
        "memory_id": version.memory_id,
        "version": version.version,
        "action": version.action,
        "body": version.body,
        "status": version.status.value,
        "actor": version.actor.value,
        "event_seq": version.event_seq,
        "changed_at": _ts(version.changed_at),
        "source_memory_id": version.source_memory_id,
        "undone": version.undone,
    }


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
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


MEMORY_HEADER = f"{'ID':<26}  {'SCOPE':<9} {'STATUS':<8} {'KEY':<24} BODY"


def memory_line(record: MemoryRecord) -> str:
    key = record.key or "-"
    return (
        f"{record.id:<26}  {record.scope.value:<9} {record.status.value:<8} {key:<24} {record.body}"
    )
