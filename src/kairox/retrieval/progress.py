"""What indexing reports: the final report and the typed progress events a surface renders.

They live apart from the indexer (which loads numpy) so a surface can name them at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the walker loads pathspec; only the indexer needs it at run time
    from kairox.retrieval.walker import SkippedFile


class FileOutcome(StrEnum):
    INDEXED = "indexed"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class IndexReport:
    root: str
    workspace_id: str
    model: str
    files_seen: int
    files_indexed: int
    files_unchanged: int
    files_deleted: int
    chunks_written: int
    chunks_embedded: int
    chunks_total: int
    ignored: int
    skipped: tuple[SkippedFile, ...]
    seconds: float


@dataclass(frozen=True, slots=True)
class ReembedReport:
    workspace_id: str
    model: str
    chunks_embedded: int
    seconds: float


@dataclass(frozen=True, slots=True)
class WalkFinished:
    root: str
    files: int
    skipped: int
    ignored: int


@dataclass(frozen=True, slots=True)
class FileProcessed:
    path: str
    outcome: FileOutcome
    chunks: int
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class FilesRemoved:
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChunksEmbedded:
    model: str
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class IndexFinished:
    report: IndexReport


IndexEvent = WalkFinished | FileProcessed | FilesRemoved | ChunksEmbedded | IndexFinished
ProgressCallback = Callable[[IndexEvent], None]

__all__ = [
    "ChunksEmbedded",
    "FileOutcome",
    "FileProcessed",
    "FilesRemoved",
    "IndexEvent",
    "IndexFinished",
    "IndexReport",
    "ProgressCallback",
    "ReembedReport",
    "WalkFinished",
]
