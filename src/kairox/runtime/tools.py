"""The read-only built-in tools: ``read_file`` inside the workspace, ``workspace_search`` and
``recall_history`` (a search of the conversation log, including turns compaction summarised away).

``read_file`` reads what the index may read: the workspace's one ``FilePolicy`` (inside the
workspace's real path, never the secret denylist, never an ignored file), and at most its cap
from disk.

Their results are untrusted input: the turn records them, and a ``<memory>`` marker inside a
result is never a proposal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from kairox.context.tokens import TOKENS_PER_MESSAGE, Tokenizer
from kairox.core.aio import blocking
from kairox.models import ToolSpec
from kairox.retrieval.file_policy import FilePolicy
from kairox.retrieval.sources import SearchFn

MAX_READ_BYTES = 64 * 1024
MAX_PATH_CHARS = 1024

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

RecallFn = Callable[[str], Awaitable[str]]  # query -> the rendered result


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    is_error: bool


def tool_schema_tokens(tokenizer: Tokenizer) -> int:
    """The tokens ``TOOL_SPECS`` cost in a request: each definition as the JSON a provider sends
    (name, description, parameter schema), wrapped like a message."""
    total = 0
    for spec in TOOL_SPECS:
        schema = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
        text = json.dumps(schema, separators=(",", ":"), default=dict)  # frozen mappings
        total += TOKENS_PER_MESSAGE + tokenizer.count(text)
    return total


class BuiltinTools:
    def __init__(
        self,
        workspace: Path,
        search: SearchFn | None,
        recall: RecallFn | None = None,
        *,
        policy: FilePolicy | None = None,
        max_read_bytes: int = MAX_READ_BYTES,
    ) -> None:
        self.workspace = workspace.resolve()
        self._search = search
        self._recall = recall
        self._policy = policy or FilePolicy()
        self._max_read_bytes = max_read_bytes

    async def run(self, name: str, arguments: str) -> ToolResult:
        try:
            args = json.loads(arguments or "{}")
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            return ToolResult(f"invalid JSON arguments: {reason}", True)
        if not isinstance(args, dict):
            return ToolResult("arguments must be a JSON object", True)
        if name == "read_file":
            return await blocking(self.read_file, str(args.get("path", "")))
        if name == "workspace_search":
            return await self.workspace_search(str(args.get("query", "")))
        if name == "recall_history":
            return await self.recall_history(str(args.get("query", "")))
        available = ", ".join(spec.name for spec in TOOL_SPECS)
        return ToolResult(f"unknown tool '{name}'; available: {available}", True)

    def read_file(self, path: str) -> ToolResult:
        """Read at most the cap from disk; refuse ignored files and the secret denylist."""
        if not path:
            return ToolResult("read_file needs a 'path'", True)
        if "\x00" in path or len(path) > MAX_PATH_CHARS:
            return ToolResult(
                f"refused: a path must be under {MAX_PATH_CHARS} characters with no NUL", True
            )
        try:
            target = (self.workspace / path).resolve()
        except (OSError, RuntimeError) as exc:
            return ToolResult(f"cannot resolve '{path}': {exc}", True)
        refused = self._policy.refusal(self.workspace, path)
        if refused is not None and refused.kind == "outside":
            return ToolResult(f"refused: '{path}' is outside the workspace", True)
        if refused is not None and refused.kind == "secret":
            return ToolResult(f"refused: '{path}' may hold secrets (read_file_deny)", True)
        if refused is not None:
            return ToolResult(f"refused: '{path}': {refused.why}", True)
        try:
            if not target.is_file():
                return ToolResult(f"no such file in the workspace: '{path}'", True)
            with target.open("rb") as handle:
                data = handle.read(self._max_read_bytes + 1)
                size = os.fstat(handle.fileno()).st_size
        except OSError as exc:
            return ToolResult(f"cannot read '{path}': {exc.strerror or exc}", True)
        cut = len(data) > self._max_read_bytes
        data = data[: self._max_read_bytes]
        if b"\x00" in data:  # binary, as the indexer judges it; NUL would also poison the store
            return ToolResult(f"refused: '{path}' is binary (it has NUL bytes)", True)
        try:
            text = _decode_prefix(data, cut=cut)
        except UnicodeDecodeError:
            return ToolResult(f"'{path}' is not UTF-8 text", True)
        if cut:
            text += f"\n[truncated: the first {self._max_read_bytes} of {size} bytes]"
        return ToolResult(text, False)

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


def _decode_prefix(data: bytes, *, cut: bool) -> str:
    """Decode UTF-8; when the read was cut, an incomplete character at the end is dropped."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            return data[: exc.start].decode("utf-8")
        raise
