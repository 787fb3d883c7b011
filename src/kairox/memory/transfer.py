"""Moving memories between homes: export to JSON or Markdown, parse them back, and import.

Export and parsing are pure functions over records and text. Import goes through
``MemoryStore.import_many`` (propose, then accept, in batches), so every imported memory is an
event.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from kairox.core.errors import InvalidInput
from kairox.core.events import UntrustedInput
from kairox.core.names import check_name
from kairox.core.records import MAX_BODY_CHARS, MemoryImport, MemoryRecord
from kairox.core.types import Actor, MemoryScope, MemoryStatus
from kairox.store.protocols import MemoryStore

TransferFormat = Literal["json", "markdown"]

_HEADING = re.compile(r"^## +(?P<scope>[A-Za-z_]+)(?: *: *(?P<key>.*?))? *$")
_META = re.compile(r"^<!-- kairox-memory (?P<json>\{.*\}) -->$")
_FENCE = re.compile(r"^(?P<fence>`{3,})\s*$")


class MemoryDraft(BaseModel):
    """One memory as it travels in an export file: no ids or owners, which are home-specific."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    scope: MemoryScope
    key: str | None = None
    body: Annotated[str, StringConstraints(min_length=1, max_length=MAX_BODY_CHARS)]
    status: MemoryStatus = MemoryStatus.ACCEPTED
    updated_at: datetime | None = None
    untrusted_inputs: tuple[UntrustedInput, ...] = ()
    """A pending memory's provenance (the untrusted text it followed): it stays marked."""

    @field_validator("key")
    @classmethod
    def _printable_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return check_name(value, what="a memory key")
        except InvalidInput as exc:
            raise ValueError(str(exc)) from None


class ExportDocument(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    format: Literal["kairox-memories"] = "kairox-memories"
    version: Literal[1] = 1
    memories: tuple[MemoryDraft, ...]


class SkippedDraft(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    scope: MemoryScope
    key: str | None
    reason: str

    def describe(self) -> str:
        """``session memory 'editor.font': why`` (words, never the enum's repr)."""
        key = f" '{self.key}'" if self.key else " (no key)"
        return f"{self.scope.value} memory{key}: {self.reason}"


class ImportReport(BaseModel):
    """What an import did, by memory id; nothing is changed silently."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    created: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    skipped: tuple[SkippedDraft, ...] = Field(default=())


def draft_of(record: MemoryRecord) -> MemoryDraft:
    return MemoryDraft(
        scope=record.scope,
        key=record.key,
        body=record.body,
        status=record.status,
        updated_at=record.updated_at,
        untrusted_inputs=record.untrusted_inputs if record.status is MemoryStatus.PENDING else (),
    )


def _fields(draft: MemoryDraft, *, exclude: set[str] | None = None) -> dict[str, object]:
    """A draft's fields as exported: an empty provenance is left out."""
    drop = set(exclude or ()) | ({"untrusted_inputs"} if not draft.untrusted_inputs else set())
    return draft.model_dump(mode="json", exclude=drop)


# -- export ---------------------------------------------------------------------------------


def export_json(records: Sequence[MemoryRecord]) -> str:
    document = ExportDocument(memories=tuple(draft_of(r) for r in records))
    data = {
        "format": document.format,
        "version": document.version,
        "memories": [_fields(d) for d in document.memories],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _fence_for(body: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def export_markdown(records: Sequence[MemoryRecord]) -> str:
    """Markdown for people to read; a metadata comment and a fence make it parse back exactly."""
    parts = ["# Kairox memories", ""]
    for record in records:
        draft = draft_of(record)
        title = draft.scope.value + (f": {draft.key}" if draft.key else "")
        meta = {k: v for k, v in _fields(draft, exclude={"body"}).items() if v is not None}
        fence = _fence_for(draft.body)
        parts += [
            f"## {title}",
            f"<!-- kairox-memory {json.dumps(meta, sort_keys=True, ensure_ascii=False)} -->",
            "",
            fence,
            draft.body,
            fence,
            "",
        ]
    return "\n".join(parts)


def export_text(records: Sequence[MemoryRecord], fmt: TransferFormat) -> str:
    return export_json(records) if fmt == "json" else export_markdown(records)


# -- parse ----------------------------------------------------------------------------------


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object whose keys are unique: a repeated key (which ``json`` would resolve to the
    last value, silently) is an error, so what is imported is what the file visibly says."""
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidInput(f"the import repeats the JSON key '{key}' in one object")
        out[key] = value
    return out


def parse_json(text: str) -> list[MemoryDraft]:
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"the import is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except RecursionError:
        raise InvalidInput("the import nests JSON too deeply to be a memory export") from None
    if isinstance(data, list):
        data = {"memories": data}
    try:
        return list(ExportDocument.model_validate(data).memories)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        raise InvalidInput(
            f"the JSON import is not a Kairox memory export: {where}: {first['msg']}"
        ) from None


def _draft(scope_text: str, key: str | None, body: str, meta: dict[str, object]) -> MemoryDraft:
    scope = MemoryScope.parse(scope_text.strip().lower())
    fields = {k: v for k, v in meta.items() if k in ("status", "updated_at", "untrusted_inputs")}
    try:
        return MemoryDraft.model_validate(
            {**fields, "scope": scope, "key": key or None, "body": body}
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(
            f"Markdown memory '{scope.value}: {key or '-'}': {where}: {first['msg']}"
        ) from None


def parse_markdown(text: str) -> list[MemoryDraft]:
    """Parse ``## scope: key`` sections; the body is the fenced block, or else the plain text."""
    lines = text.splitlines()
    drafts: list[MemoryDraft] = []
    i = 0
    while i < len(lines):
        heading = _HEADING.match(lines[i])
        if heading is None:
            i += 1
            continue
        i += 1
        meta: dict[str, object] = {}
        if i < len(lines) and (found := _META.match(lines[i].strip())):
            try:
                loaded = json.loads(found.group("json"), object_pairs_hook=_unique_keys)
            except json.JSONDecodeError:
                raise InvalidInput(f"line {i + 1}: the kairox-memory comment is not JSON") from None
            if isinstance(loaded, dict):
                meta = loaded
            i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        body_lines: list[str] = []
        fence = _FENCE.match(lines[i]) if i < len(lines) else None
        if fence is not None:
            closing = fence.group("fence")
            i += 1
            while i < len(lines) and lines[i].rstrip() != closing:
                body_lines.append(lines[i])
                i += 1
            if i >= len(lines):
                raise InvalidInput(f"the fenced body under '{heading.group(0)}' is never closed")
            i += 1
        else:
            while i < len(lines) and _HEADING.match(lines[i]) is None:
                body_lines.append(lines[i])
                i += 1
        body = "\n".join(body_lines).strip()
        if not body:
            raise InvalidInput(f"the memory '{heading.group(0)[3:]}' has an empty body")
        drafts.append(_draft(heading.group("scope"), heading.group("key"), body, meta))
    if not drafts and text.strip():
        raise InvalidInput("no '## scope: key' sections found in the Markdown import")
    return drafts


def parse_text(text: str, fmt: TransferFormat) -> list[MemoryDraft]:
    return parse_json(text) if fmt == "json" else parse_markdown(text)


# -- import ---------------------------------------------------------------------------------


def import_drafts(
    store: MemoryStore,
    drafts: Sequence[MemoryDraft],
    *,
    workspace_id: str,
    actor: Actor = Actor.USER,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import into the user's and one workspace's memory, each change as a memory event.

    Accepted drafts are proposed and accepted (replacing the body under the same key); pending
    drafts stay pending for review; session, rejected and deleted drafts are skipped with a reason.
    The whole import is one ``MemoryStore.import_many`` (one transaction, all or nothing, written
    in batches), so it is linear in the number of drafts. ``progress(done, total)`` is called as
    it goes.
    """
    entries: list[MemoryImport] = []
    skipped: list[SkippedDraft] = []
    for draft in drafts:
        if draft.scope is MemoryScope.SESSION:
            skipped.append(_skip(draft, "session memories belong to one session"))
        elif draft.status not in (MemoryStatus.ACCEPTED, MemoryStatus.PENDING):
            skipped.append(_skip(draft, f"the memory was {draft.status.value}"))
        elif not draft.key:
            skipped.append(_skip(draft, f"{draft.scope.value} memory needs a key"))
        else:
            accept = draft.status is MemoryStatus.ACCEPTED
            entries.append(
                MemoryImport(
                    draft.scope,
                    draft.key,
                    draft.body,
                    accept=accept,
                    untrusted_inputs=() if accept else draft.untrusted_inputs,
                )
            )
    total = len(drafts)

    def step(done: int, _: int) -> None:  # skipped drafts count as done from the start
        if progress is not None:
            progress(len(skipped) + done, total)

    if progress is not None and not entries and total:
        progress(total, total)
    results = store.import_many(entries, workspace_id=workspace_id, actor=actor, progress=step)
    by_outcome: dict[str, list[str]] = {
        o: [] for o in ("created", "replaced", "pending", "unchanged")
    }
    for result in results:
        by_outcome[result.outcome].append(result.memory_id)
    return ImportReport(
        created=tuple(by_outcome["created"]),
        replaced=tuple(by_outcome["replaced"]),
        pending=tuple(by_outcome["pending"]),
        unchanged=tuple(by_outcome["unchanged"]),
        skipped=tuple(skipped),
    )


def _skip(draft: MemoryDraft, reason: str) -> SkippedDraft:
    return SkippedDraft(scope=draft.scope, key=draft.key, reason=reason)


__all__ = [
    "ExportDocument",
    "ImportReport",
    "MemoryDraft",
    "SkippedDraft",
    "TransferFormat",
    "draft_of",
    "export_json",
    "export_markdown",
    "export_text",
    "import_drafts",
    "parse_json",
    "parse_markdown",
    "parse_text",
]
