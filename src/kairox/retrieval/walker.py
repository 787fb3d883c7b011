"""Walk a workspace: which files the RAG index may read, and which it skipped and why.

Honours ``.gitignore`` and ``.kairoxignore`` at every level (git's wildmatch rules via pathspec;
a deeper file overrides a shallower one, ``.kairoxignore`` overrides ``.gitignore`` beside it),
never enters VCS and cache directories, and turns every per-file failure into a skip record.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import pathspec

from kairox.core.errors import InvalidInput

DEFAULT_MAX_FILE_BYTES = 1 << 20
IGNORE_FILES = (".gitignore", ".kairoxignore")
ALWAYS_SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "_darcs", ".jj",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
        ".venv", "node_modules", ".kairox",
    }
)  # fmt: skip
SNIFF_BYTES = 8192


class SkipReason(StrEnum):
    BINARY = "binary"
    NOT_UTF8 = "not-utf8"
    TOO_LARGE = "too-large"
    UNREADABLE = "unreadable"
    NOT_REGULAR = "not-a-regular-file"


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """A candidate file: ``path`` is POSIX-style and relative to the workspace root."""

    path: str
    abs_path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: SkipReason
    detail: str = ""

    def describe(self) -> str:
        return f"{self.path}: {self.reason.value}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True, slots=True)
class WalkResult:
    root: Path
    files: tuple[WorkspaceFile, ...]
    skipped: tuple[SkippedFile, ...]
    ignored: int


@dataclass(frozen=True, slots=True)
class TextFile:
    """A file's decoded text and the SHA-256 of its bytes."""

    text: str
    file_hash: str


class FileSkipped(Exception):
    """Raised by ``read_text_file``; the indexer records it and moves on."""

    def __init__(self, skipped: SkippedFile) -> None:
        super().__init__(skipped.describe())
        self.skipped = skipped


_Spec = tuple[str, pathspec.GitIgnoreSpec]


def walk_workspace(
    root: str | os.PathLike[str], *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> WalkResult:
    """List indexable files under ``root`` in a stable (sorted) order."""
    base = Path(root).expanduser().resolve()
    if not base.is_dir():
        raise InvalidInput(f"cannot index {base}: it is not a directory")
    files: list[WorkspaceFile] = []
    skipped: list[SkippedFile] = []
    ignored = 0
    root_specs: list[_Spec] = []
    exclude = _load_spec(base / ".git" / "info" / "exclude")
    if exclude is not None:
        root_specs.append(("", exclude))
    stack: list[tuple[Path, str, list[_Spec]]] = [(base, "", root_specs)]
    while stack:
        directory, rel_dir, inherited = stack.pop()
        specs = inherited + _specs_for(directory, rel_dir)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(SkippedFile(rel_dir or ".", SkipReason.UNREADABLE, _short(exc)))
            continue
        subdirs: list[tuple[Path, str, list[_Spec]]] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name in ALWAYS_SKIPPED_DIRS or _is_ignored(specs, rel, is_dir=True):
                    ignored += 1
                else:
                    subdirs.append((Path(entry.path), rel, specs))
                continue
            if _is_ignored(specs, rel, is_dir=False):
                ignored += 1
                continue
            record = _stat_file(entry, rel, max_file_bytes)
            if isinstance(record, SkippedFile):
                skipped.append(record)
            else:
                files.append(record)
        stack.extend(reversed(subdirs))
    files.sort(key=lambda f: f.path)
    return WalkResult(root=base, files=tuple(files), skipped=tuple(skipped), ignored=ignored)


def ignored_by(root: Path, rel: str) -> str | None:
    """Why the index would not read ``rel`` (a path inside ``root``), or None if it would.

    The same rules as ``walk_workspace``: skipped directories and every ``.gitignore`` /
    ``.kairoxignore`` from the root down to the file's directory.
    """
    base = root.resolve()
    parts = [p for p in rel.split("/") if p]
    specs: list[_Spec] = []
    exclude = _load_spec(base / ".git" / "info" / "exclude")
    if exclude is not None:
        specs.append(("", exclude))
    directory, rel_dir = base, ""
    for index, part in enumerate(parts):
        specs = specs + _specs_for(directory, rel_dir)
        here = f"{rel_dir}/{part}" if rel_dir else part
        last = index == len(parts) - 1
        if not last and part in ALWAYS_SKIPPED_DIRS:
            return f"'{part}/' is never read"
        if _is_ignored(specs, here, is_dir=not last):
            return "it is ignored by .gitignore or .kairoxignore"
        directory, rel_dir = directory / part, here
    return None


def read_text_file(
    file: WorkspaceFile, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> TextFile:
    """Read and decode one file; raise ``FileSkipped`` if it is binary, not UTF-8 or too large."""
    try:
        with open(file.abs_path, "rb") as handle:
            raw = handle.read(max_file_bytes + 1)
    except OSError as exc:
        raise FileSkipped(SkippedFile(file.path, SkipReason.UNREADABLE, _short(exc))) from exc
    if len(raw) > max_file_bytes:
        raise FileSkipped(
            SkippedFile(file.path, SkipReason.TOO_LARGE, f"over {max_file_bytes} bytes")
        )
    if b"\x00" in raw[:SNIFF_BYTES]:
        raise FileSkipped(SkippedFile(file.path, SkipReason.BINARY, "NUL byte"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        detail = f"invalid UTF-8 at byte {exc.start}"
        raise FileSkipped(SkippedFile(file.path, SkipReason.NOT_UTF8, detail)) from exc
    return TextFile(text=text, file_hash=hashlib.sha256(raw).hexdigest())


def _stat_file(
    entry: os.DirEntry[str], rel: str, max_file_bytes: int
) -> WorkspaceFile | SkippedFile:
    try:
        info = entry.stat(follow_symlinks=True)
    except OSError as exc:
        return SkippedFile(rel, SkipReason.UNREADABLE, _short(exc))
    if not stat.S_ISREG(info.st_mode):
        kind = "directory symlink, not followed" if stat.S_ISDIR(info.st_mode) else "special file"
        return SkippedFile(rel, SkipReason.NOT_REGULAR, kind)
    if info.st_size > max_file_bytes:
        return SkippedFile(
            rel, SkipReason.TOO_LARGE, f"{info.st_size} bytes > limit {max_file_bytes}"
        )
    return WorkspaceFile(rel, Path(entry.path), info.st_size, info.st_mtime_ns)


def _specs_for(directory: Path, rel_dir: str) -> list[_Spec]:
    found: list[_Spec] = []
    for name in IGNORE_FILES:
        spec = _load_spec(directory / name)
        if spec is not None:
            found.append((rel_dir, spec))
    return found


def _load_spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _is_ignored(specs: list[_Spec], rel: str, *, is_dir: bool) -> bool:
    """Git semantics: the deepest ignore file with a matching pattern decides, last pattern wins."""
    for base, spec in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        decision = spec.check_file(sub + "/" if is_dir else sub).include
        if decision is not None:
            return bool(decision)
    return False


def _short(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
