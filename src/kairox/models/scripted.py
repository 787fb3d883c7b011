"""A deterministic model that replays a JSON Lines script: for tests, demos and users' own tests.

The n-th call for a purpose in a session (``request.call_index``) gets the n-th line of that
purpose. Lines can stream text, request a tool call, report usage, fail, or hang until cancelled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Annotated, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kairox.core.errors import ConfigError
from kairox.core.events import Usage
from kairox.core.messages import ToolCall
from kairox.models.base import (
    ModelRequest,
    Purpose,
    StreamFailed,
    StreamItem,
    TextDelta,
    ToolCallRequested,
    UsageReported,
    text_chunks,
)

DEFAULT_CHUNK = 4
_LINE_HELP = (
    'each line must be one JSON object such as {"text": "Hello", "chunk": 4}, '
    '{"deltas": ["Hel", "lo"]}, {"tool_call": {"name": "read_file", "arguments": {}}} '
    'or {"error": "boom"}'
)


class ScriptToolCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: Annotated[str, Field(min_length=1)]
    arguments: dict[str, object] = Field(default_factory=dict)  # free-form JSON tool arguments


class ScriptLine(BaseModel):
    """One scripted reply.

    Text (``text`` split into ``chunk``-sized deltas, or explicit ``deltas``) streams first; then
    ``error`` fails the call, or else the ``tool_call`` is requested and usage is reported.
    ``hang`` keeps the stream open after its deltas until the consumer cancels it.
    ``pause_ms`` waits between deltas, as a model generating at that pace would.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    text: str | None = None
    chunk: Annotated[int, Field(ge=1)] = DEFAULT_CHUNK
    deltas: tuple[str, ...] | None = None
    purpose: Purpose = "reply"
    tool_call: ScriptToolCall | None = None
    error: Annotated[str, Field(min_length=1)] | None = None
    usage: Usage | None = None
    hang: bool = False
    pause_ms: Annotated[int, Field(ge=0, le=10_000)] = 0

    @model_validator(mode="after")
    def _check(self) -> ScriptLine:
        if self.text is not None and self.deltas is not None:
            raise ValueError('use either "text" or "deltas", not both')
        if (
            self.text is None
            and self.deltas is None
            and self.tool_call is None
            and self.error is None
            and not self.hang
        ):
            raise ValueError('a line needs "text", "deltas", "tool_call", "error" or "hang"')
        return self

    def pieces(self) -> tuple[str, ...]:
        if self.deltas is not None:
            return tuple(d for d in self.deltas if d)
        if self.text:
            return tuple(text_chunks(self.text, self.chunk))
        return ()


def parse_script(text: str, *, source: str) -> tuple[ScriptLine, ...]:
    """Parse JSON Lines text; blank lines are skipped. Errors name ``source`` and the line."""
    lines: list[ScriptLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"line {number} is not valid JSON ({exc.msg}, column {exc.colno})",
                file=source,
                fix=_LINE_HELP,
            ) from None
        if not isinstance(data, dict):
            raise ConfigError(f"line {number} is not a JSON object", file=source, fix=_LINE_HELP)
        try:
            lines.append(ScriptLine.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "line"
            raise ConfigError(
                f"line {number}: {where}: {first['msg']}", file=source, fix=_LINE_HELP
            ) from None
    return tuple(lines)


def load_script(path: str | Path) -> tuple[ScriptLine, ...]:
    """Read and parse a script file; a missing or unreadable file is a ``ConfigError``."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read the model script ({exc.strerror or exc})",
            file=str(file),
            fix="point scripted:<path> at an existing JSON Lines file",
        ) from None
    return parse_script(text, source=str(file))


def write_script(path: str | Path, lines: Iterable[ScriptLine | Mapping[str, object]]) -> Path:
    """Write a script file (a convenience for tests); returns the path."""
    file = Path(path)
    rows = [
        (
            line.model_dump_json(exclude_defaults=True)
            if isinstance(line, ScriptLine)
            else json.dumps(dict(line))
        )
        for line in lines
    ]
    file.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    return file


class ScriptedProvider:
    """Replays scripted replies. Build it from a file (``from_file``) or from lines in code."""

    def __init__(self, lines: Iterable[ScriptLine], *, source: str = "<inline script>") -> None:
        self._lines = tuple(lines)
        self._source = source
        self._by_purpose: dict[Purpose, tuple[ScriptLine, ...]] = {
            purpose: tuple(line for line in self._lines if line.purpose == purpose)
            for purpose in get_args(Purpose)
        }

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        return cls(load_script(path), source=str(path))

    @property
    def spec(self) -> str:
        return f"scripted:{self._source}"

    @property
    def model_name(self) -> str:
        return "scripted"

    @property
    def lines(self) -> tuple[ScriptLine, ...]:
        return self._lines

    def line_for(self, purpose: Purpose, call_index: int) -> ScriptLine | None:
        candidates = self._by_purpose[purpose]
        return candidates[call_index] if call_index < len(candidates) else None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        line = self.line_for(request.purpose, request.call_index)
        if line is None:
            yield StreamFailed(
                f"scripted model has no reply #{request.call_index + 1} for purpose "
                f"'{request.purpose}' in {self._source}; add more lines",
                "script_exhausted",
            )
            return
        pieces = line.pieces()
        for piece in pieces:
            # Let the consumer interleave, as a real stream would (a model's own pace, if set).
            await asyncio.sleep(line.pause_ms / 1000)
            yield TextDelta(piece)
        if line.hang:
            await asyncio.Event().wait()  # until the consumer cancels or closes the stream
        if line.error is not None:
            yield StreamFailed(line.error, "other")
            return
        if line.tool_call is not None:
            yield ToolCallRequested(
                ToolCall(
                    id=f"call_{request.call_index}",
                    name=line.tool_call.name,
                    arguments=json.dumps(line.tool_call.arguments, sort_keys=True),
                )
            )
        yield UsageReported(line.usage or Usage(completion_tokens=len(pieces)))

    async def aclose(self) -> None:
        return None
