"""Reading and splitting the files ``kairox kb add`` loads, shared by the local kinds.

A document is split into passages on paragraph boundaries, each with its line range, so a hit
points at the part of a long file that matched. Query text becomes plain terms here too, so no
user input reaches an FTS or tantivy query parser as syntax.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kairox.retrieval.file_policy import FilePolicy
from kairox.store.words import words

MAX_FILE_BYTES = 5 * 1024 * 1024
PASSAGE_CHARS = 1200
MAX_QUERY_TERMS = 64
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True, slots=True)
class Passage:
    ordinal: int
    text: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Document:
    path: str
    title: str
    content_hash: str
    passages: tuple[Passage, ...]


@dataclass(frozen=True, slots=True)
class Unreadable:
    path: str
    reason: str


def expand_paths(
    paths: Sequence[Path], policy: FilePolicy | None = None
) -> Iterator[Path | Unreadable]:
    """Files as given; directories expand to their files (sorted, hidden and ignored entries
    skipped). The workspace's file policy applies: a file on the secret denylist is refused even
    when named, and a directory's symlinks out of it are not followed."""
    policy = policy or FilePolicy()
    for raw in paths:
        path = raw.expanduser()
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path)
                if any(part.startswith(".") for part in rel.parts) or not child.is_file():
                    continue
                refused = policy.refusal(path, rel.as_posix())
                if refused is None:
                    yield child.resolve()
                elif refused.kind != "ignored":
                    yield Unreadable(str(child), f"refused: {refused.why}")
        elif path.is_file():
            real = path.resolve()
            if policy.denied(path.name) or policy.denied(real.name):
                yield Unreadable(str(path), "refused: it may hold secrets (read_file_deny)")
            else:
                yield real
        else:
            yield Unreadable(str(path), "no such file")


def load_document(path: Path) -> Document | Unreadable:
    """Read and split one file; binary, non-UTF-8, oversized and empty files are skipped."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return Unreadable(str(path), f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
        data = path.read_bytes()
    except OSError as exc:
        return Unreadable(str(path), f"cannot read: {exc.strerror or exc}")
    if b"\x00" in data[:8192]:
        return Unreadable(str(path), "binary file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return Unreadable(str(path), "not UTF-8 text")
    passages = split_passages(text)
    if not passages:
        return Unreadable(str(path), "no text")
    return Document(
        path=str(path),
        title=document_title(text, path),
        content_hash=hashlib.sha256(data).hexdigest(),
        passages=passages,
    )


def document_title(text: str, path: Path) -> str:
    """The first Markdown heading in the first 40 lines, else the file name."""
    for line in text.splitlines()[:40]:
        match = _HEADING.match(line)
        if match:
            return match.group(1).strip()
    return path.name


def split_passages(text: str, *, max_chars: int = PASSAGE_CHARS) -> tuple[Passage, ...]:
    """Pack paragraphs into passages of at most ``max_chars``; long paragraphs split by line."""
    passages: list[Passage] = []
    buffer: list[str] = []
    start = 0
    end = 0
    size = 0

    def flush() -> None:
        nonlocal buffer, size
        body = "\n\n".join(buffer).strip()
        if body:
            passages.append(Passage(len(passages), body, start, end))
        buffer = []
        size = 0

    for first, lines in _paragraphs(text):
        for piece_first, piece_last, piece in _fit(first, lines, max_chars):
            if buffer and size + len(piece) + 2 > max_chars:
                flush()
            if not buffer:
                start = piece_first
            buffer.append(piece)
            end = piece_last
            size += len(piece) + 2
    flush()
    return tuple(passages)


def _paragraphs(text: str) -> Iterator[tuple[int, list[str]]]:
    current: list[str] = []
    first = 1
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not current:
                first = number
            current.append(line.rstrip())
        elif current:
            yield first, current
            current = []
    if current:
        yield first, current


def _fit(first: int, lines: list[str], max_chars: int) -> Iterator[tuple[int, int, str]]:
    """One paragraph as pieces no longer than ``max_chars``, each with its line range."""
    body = "\n".join(lines)
    if len(body) <= max_chars:
        yield first, first + len(lines) - 1, body
        return
    piece: list[str] = []
    piece_first = first
    size = 0
    for offset, line in enumerate(lines):
        number = first + offset
        for chunk_start in range(0, max(len(line), 1), max_chars):
            chunk = line[chunk_start : chunk_start + max_chars]
            if piece and size + len(chunk) + 1 > max_chars:
                yield piece_first, number if chunk_start else number - 1, "\n".join(piece)
                piece, size = [], 0
            if not piece:
                piece_first = number
            piece.append(chunk)
            size += len(chunk) + 1
    if piece:
        yield piece_first, first + len(lines) - 1, "\n".join(piece)


def query_terms(query: str) -> list[str]:
    """The terms of a query (``kairox.store.words``), de-duplicated in order; punctuation and
    operators are dropped."""
    return list(dict.fromkeys(words(query)))[:MAX_QUERY_TERMS]
