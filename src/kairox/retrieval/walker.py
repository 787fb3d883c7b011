"""Walk a workspace: which files the RAG index may read, and which it skipped and why.

Honours ``.gitignore`` and ``.kairoxignore`` at every level (git's wildmatch rules via pathspec;
a deeper file overrides a shallower one, and in a trusted workspace ``.kairoxignore`` overrides
``.gitignore`` beside it; an untrusted one may only hide more), never enters VCS and cache
directories, applies the workspace's ``FilePolicy`` (no secret, no symlink out of the workspace),
and turns every per-file failure into a skip record.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import pathspec

from kairox.core.errors import InvalidInput

if TYPE_CHECKING:
    from kairox.retrieval.file_policy import FilePolicy

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
    SECRET = "secret"
    OUTSIDE = "outside-workspace"


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """A candidate file: ``path`` is POSIX-style and relative to the workspace root."""

    path: str
    abs_path: str  # the real path the walk checked
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


# (directory relative to the root, its patterns, whether they come from a .kairoxignore)
_Spec = tuple[str, pathspec.GitIgnoreSpec, bool]


def walk_workspace(
    root: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    policy: FilePolicy | None = None,
) -> WalkResult:
    """List indexable files under ``root`` in a stable (sorted) order."""
    if policy is None:
        from kairox.retrieval.file_policy import FilePolicy

        policy = FilePolicy()
    base = Path(root).expanduser().resolve()
    if not base.is_dir():
        raise InvalidInput(f"cannot index {base}: it is not a directory")
    trusted = policy.trusted
    files: list[WorkspaceFile] = []
    skipped: list[SkippedFile] = []
    ignored = 0
    root_specs: list[_Spec] = []
    exclude = _load_spec(base / ".git" / "info" / "exclude")
    if exclude is not None:
        root_specs.append(("", exclude, False))
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
                if (
                    entry.name in ALWAYS_SKIPPED_DIRS
                    or _is_ignored(specs, rel, is_dir=True, trusted=trusted)
                    or policy.denied(rel, is_dir=True, parents=False)
                ):
                    ignored += 1
                else:
                    subdirs.append((Path(entry.path), rel, specs))
                continue
            if _is_ignored(specs, rel, is_dir=False, trusted=trusted):
                ignored += 1
                continue
            if policy.denied(rel, parents=False):
                skipped.append(SkippedFile(rel, SkipReason.SECRET, "on the secret denylist"))
                continue
            if entry.is_symlink():  # its target must pass the policy too
                refused = policy.refusal(base, rel)
                if refused is not None and refused.kind == "ignored":
                    ignored += 1
                elif refused is not None:
                    reason = SkipReason.SECRET if refused.kind == "secret" else SkipReason.OUTSIDE
                    skipped.append(SkippedFile(rel, reason, f"symlink: {refused.why}"))
                if refused is not None:
                    continue
            record = _stat_file(entry, rel, max_file_bytes)
            if isinstance(record, SkippedFile):
                skipped.append(record)
            else:
                files.append(record)
        stack.extend(reversed(subdirs))
    files.sort(key=lambda f: f.path)
    return WalkResult(root=base, files=tuple(files), skipped=tuple(skipped), ignored=ignored)


def ignored_by(root: Path, rel: str, *, trusted: bool = False) -> str | None:
    """Why the index would not read ``rel`` (a path inside ``root``), or None if it would.

    The same rules as ``walk_workspace``: skipped directories and every ``.gitignore`` /
    ``.kairoxignore`` from the root down to the file's directory (``trusted``: whether the
    ``.kairoxignore`` files may un-ignore).
    """
    base = root.resolve()
    parts = [p for p in rel.split("/") if p]
    specs: list[_Spec] = []
    exclude = _load_spec(base / ".git" / "info" / "exclude")
    if exclude is not None:
        specs.append(("", exclude, False))
    directory, rel_dir = base, ""
    for index, part in enumerate(parts):
        specs = specs + _specs_for(directory, rel_dir)
        here = f"{rel_dir}/{part}" if rel_dir else part
        last = index == len(parts) - 1
        if not last and part in ALWAYS_SKIPPED_DIRS:
            return f"'{part}/' is never read"
        if _is_ignored(specs, here, is_dir=not last, trusted=trusted):
            return "it is ignored by .gitignore or .kairoxignore"
        directory, rel_dir = directory / part, here
    return None


def read_text_file(
    file: WorkspaceFile, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> TextFile:
    """Read and decode one file; raise ``FileSkipped`` if it is binary, not UTF-8 or too large."""
    try:  # the real path the walk checked: a link swapped in since is not followed
        fd = os.open(file.abs_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
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
    # A plain string: a Path per file was a third of an unchanged re-index's walk.
    real = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
    return WorkspaceFile(rel, real, info.st_size, info.st_mtime_ns)


def _specs_for(directory: Path, rel_dir: str) -> list[_Spec]:
    found: list[_Spec] = []
    for name in IGNORE_FILES:
        spec = _load_spec(directory / name)
        if spec is not None:
            found.append((rel_dir, spec, name == ".kairoxignore"))
    return found


def _load_spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _is_ignored(specs: list[_Spec], rel: str, *, is_dir: bool, trusted: bool) -> bool:
    """Git semantics: the deepest ignore file with a matching pattern decides, last pattern wins.
    Untrusted, the ``.kairoxignore`` files decide apart: they may add to what is ignored, never
    un-ignore what ``.gitignore`` hides."""
    if trusted:
        return _decide(specs, rel, is_dir=is_dir)
    git = [s for s in specs if not s[2]]
    own = [s for s in specs if s[2]]
    return _decide(git, rel, is_dir=is_dir) or _decide(own, rel, is_dir=is_dir)


def _decide(specs: list[_Spec], rel: str, *, is_dir: bool) -> bool:
    for base, spec, _ in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        decision = spec.check_file(sub + "/" if is_dir else sub).include
        if decision is not None:
            return bool(decision)
    return False


def _short(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
