"""Split a file's text into overlapping, line-ranged chunks for the RAG index.

Size is bounded in characters (``max_chars``, default 1,600 ≈ 400 tokens, which fits a MiniLM
window): characters are what embedding models and prompts pay for, whatever the line lengths.
Cuts prefer definition boundaries (code, by extension) or blank lines and headings (prose). A chunk
repeats the last ``overlap_lines`` lines of the one before, except after a cut at a definition or
heading, where a new unit starts and the overlap would only be noise. Line numbers are 1-based.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

CODE_EXTENSIONS = frozenset(
    {
     ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt",
     ".kts", ".scala", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs", ".fs", ".rb",
     ".php", ".swift", ".m", ".mm", ".lua", ".pl", ".pm", ".sh", ".bash", ".zsh", ".r", ".jl",
     ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".dart", ".vue", ".svelte", ".sql", ".proto",
     ".zig", ".nim", ".v", ".tf",
    }
)  # fmt: skip
_DEFINITION = re.compile(
    r"^\s*(?:@\w|(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function|fn|func|fun|impl|struct|enum|trait|interface|module|macro_rules!|"
    r"defmodule|defp?|sub|proc|package|namespace|object|type)\b)"
)
STRONG_BOUNDARY = 3
CHUNKER_VERSION = 2
_HEADING = re.compile(r"^(?:#{1,6}\s|=+\s*$|-{3,}\s*$)")


@dataclass(frozen=True, slots=True)
class ChunkingOptions:
    """``max_chars`` bounds every chunk's text; ``overlap_lines`` lines repeat between chunks."""

    max_chars: int = 1600
    overlap_lines: int = 2

    @property
    def signature(self) -> str:
        """Names the chunking that produced stored chunks; a different one re-chunks every file."""
        return f"lines-v{CHUNKER_VERSION}:{self.max_chars}:{self.overlap_lines}"

    def __post_init__(self) -> None:
        if self.max_chars < 16:
            raise ValueError("max_chars must be at least 16")
        if self.overlap_lines < 0:
            raise ValueError("overlap_lines must be >= 0")


@dataclass(frozen=True, slots=True)
class Chunk:
    ord: int
    start_line: int
    end_line: int
    text: str
    chunk_hash: str


def is_code_path(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in CODE_EXTENSIONS


def chunk_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: ``\\n`` or ``\\r\\n`` end a line, nothing else does."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def chunk_text(text: str, path: str, options: ChunkingOptions | None = None) -> list[Chunk]:
    """Chunks covering every non-blank line of ``text``, in order, none longer than max_chars."""
    opts = options or ChunkingOptions()
    units = _units(split_lines(text), opts.max_chars)
    if not units:
        return []
    scores = _boundary_scores([u[1] for u in units], code=is_code_path(path))
    chunks: list[Chunk] = []
    start = 0
    n = len(units)
    while start < n:
        end, size = start, 0
        while end < n and size + len(units[end][1]) + (1 if end > start else 0) <= opts.max_chars:
            size += len(units[end][1]) + (1 if end > start else 0)
            end += 1
        end = max(end, start + 1)
        if end < n:
            end = _best_cut(scores, start, end)
        _emit(chunks, units[start:end])
        if end >= n:
            break
        overlap = 0 if scores[end] >= STRONG_BOUNDARY else opts.overlap_lines
        start = max(end - overlap, start + 1)
        while start < end and not units[start][1].strip() and start + 1 < n:
            start += 1
    return chunks


def _units(lines: list[str], max_chars: int) -> list[tuple[int, str]]:
    """(1-based line number, text) pairs; a line longer than ``max_chars`` becomes several."""
    units: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        while len(line) > max_chars:
            cut = line.rfind(" ", max_chars // 2, max_chars)
            cut = cut + 1 if cut > 0 else max_chars
            units.append((number, line[:cut]))
            line = line[cut:]
        units.append((number, line))
    return units


def _boundary_scores(lines: list[str], *, code: bool) -> list[int]:
    """scores[i] rates a cut just before unit i: 3 top-level definition or heading, 0 mid-block."""
    scores = [0] * len(lines)
    for i in range(1, len(lines)):
        line, previous = lines[i], lines[i - 1]
        blank_before = not previous.strip()
        if code and _DEFINITION.match(line) and not previous.lstrip().startswith("@"):
            scores[i] = 3 if line[:1].strip() else 2
        elif not code and _HEADING.match(line):
            scores[i] = 3
        elif blank_before and line.strip():
            scores[i] = 1 if code else 2
    return scores


def _best_cut(scores: list[int], start: int, end: int) -> int:
    """The best boundary in the second half of [start, end]; ties go to the latest one."""
    low = start + max(1, (end - start) // 2)
    best, best_score = end, 0
    for i in range(low, end + 1):
        if i < len(scores) and scores[i] >= best_score and scores[i] > 0:
            best, best_score = i, scores[i]
    return best


def _emit(chunks: list[Chunk], units: list[tuple[int, str]]) -> None:
    first = 0
    last = len(units)
    while first < last and not units[first][1].strip():
        first += 1
    while last > first and not units[last - 1][1].strip():
        last -= 1
    if first == last:
        return
    body = units[first:last]
    text = _join(body)
    chunks.append(Chunk(len(chunks), body[0][0], body[-1][0], text, chunk_hash(text)))


def _join(units: list[tuple[int, str]]) -> str:
    """Rejoin units; pieces of one split line join without a newline."""
    parts = [units[0][1]]
    for (prev_line, _), (line, text) in itertools.pairwise(units):
        parts.append(text if line == prev_line else "\n" + text)
    return "".join(parts)
