"""Turning facade results into JSON objects and terminal text."""

from __future__ import annotations

import json
from datetime import datetime

import click

from kairox.core.clock import isoformat
from kairox.core.events import StoredEvent
from kairox.core.records import MemoryRecord

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
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def memory_line(record: MemoryRecord) -> str:
    key = record.key or "-"
    return f"{record.id}  {record.scope.value:<9} {record.status.value:<8} {key:<24} {record.body}"
