"""The read-only built-in tools: ``read_file`` inside the workspace, ``workspace_search`` and
``recall_history`` (a search of the conversation log, including turns compaction summarised away).

Their results are untrusted input: the turn records them, and a ``<memory>`` marker inside a
result is never a proposal.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from kairox.retrieval.types import RetrievalHit
from kairox.runtime.models import ToolSpec

MAX_READ_BYTES = 64 * 1024

TOOL_SPECS = (
    ToolSpec(
        name="read_file",
        description="Read a UTF-8 text file inside the workspace. Paths are relative to it.",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Path in the workspace."}},
            "required": ["path"],
        },
    ),
    ToolSpec(
        name="workspace_search",
        description="Search the workspace's indexed documents; returns matching passages.",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    ),
    ToolSpec(
        name="recall_history",
        description=(
            "Search the conversation history (including turns summarised away) for earlier "
            "messages; returns dated matches with their session, turn and seq."
        ),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    ),
)

SearchFn = Callable[[str], Awaitable[list[RetrievalHit]]]
RecallFn = Callable[[str], Awaitable[str]]  # query -> the rendered result


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    is_error: bool


class BuiltinTools:
    def __init__(
        self, workspace: Path, search: SearchFn | None, recall: RecallFn | None = None
    ) -> None:
        self.workspace = workspace.resolve()
        self._search = search
        self._recall = recall

    async def run(self, name: str, arguments: str) -> ToolResult:
        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return ToolResult(f"invalid JSON arguments: {exc.msg}", True)
        if not isinstance(args, dict):
            return ToolResult("arguments must be a JSON object", True)
        if name == "read_file":
            return self.read_file(str(args.get("path", "")))
        if name == "workspace_search":
            return await self.workspace_search(str(args.get("query", "")))
        if name == "recall_history":
            return await self.recall_history(str(args.get("query", "")))
        available = ", ".join(spec.name for spec in TOOL_SPECS)
        return ToolResult(f"unknown tool '{name}'; available: {available}", True)

    def read_file(self, path: str) -> ToolResult:
        if not path:
            return ToolResult("read_file needs a 'path'", True)
        target = (self.workspace / path).resolve()
        if not target.is_relative_to(self.workspace):
            return ToolResult(f"refused: '{path}' is outside the workspace", True)
        if not target.is_file():
            return ToolResult(f"no such file in the workspace: '{path}'", True)
        data = target.read_bytes()[:MAX_READ_BYTES]
        try:
            return ToolResult(data.decode("utf-8"), False)
        except UnicodeDecodeError:
            return ToolResult(f"'{path}' is not UTF-8 text", True)

    async def workspace_search(self, query: str) -> ToolResult:
        if self._search is None:
            return ToolResult("the workspace index is not available", True)
        if not query.strip():
            return ToolResult("workspace_search needs a 'query'", True)
        hits = await self._search(query)
        if not hits:
            return ToolResult("no matches", False)
        lines = []
        for hit in hits:
            where = f"{hit.path}:{hit.start_line}-{hit.end_line}" if hit.path else hit.source
            lines.append(f"[{where}]\n{hit.text}")
        return ToolResult("\n\n".join(lines), False)

    async def recall_history(self, query: str) -> ToolResult:
        if self._recall is None:
            return ToolResult("the history index is not available", True)
        if not query.strip():
            return ToolResult("recall_history needs a 'query'", True)
        return ToolResult(await self._recall(query), False)
