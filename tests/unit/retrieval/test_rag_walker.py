"""The workspace walker: ignore files at every depth, skip reasons, and resilience to bad files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kairox.core.errors import InvalidInput
from kairox.retrieval import walker
from kairox.retrieval.walker import (
    FileSkipped,
    SkipReason,
    read_text_file,
    walk_workspace,
)


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def paths(root: Path, **kwargs: int) -> list[str]:
    return [f.path for f in walk_workspace(root, **kwargs).files]


def test_gitignore_patterns_negation_and_directories(workspace: Path) -> None:
    write(workspace, ".gitignore", "*.log\n!keep.log\nbuild/\n/top.txt\n")
    write(workspace, "a.py", "print(1)\n")
    write(workspace, "debug.log", "x\n")
    write(workspace, "keep.log", "x\n")
    write(workspace, "build/out.py", "x\n")
    write(workspace, "top.txt", "x\n")
    write(workspace, "sub/top.txt", "x\n")
    found = paths(workspace)
    assert found == [".gitignore", "a.py", "keep.log", "sub/top.txt"]


def test_nested_gitignore_applies_relative_to_its_directory(workspace: Path) -> None:
    write(workspace, "pkg/.gitignore", "generated.py\n/local.txt\n")
    write(workspace, "pkg/generated.py", "x\n")
    write(workspace, "pkg/deep/generated.py", "x\n")
    write(workspace, "pkg/local.txt", "x\n")
    write(workspace, "pkg/deep/local.txt", "x\n")
    write(workspace, "generated.py", "x\n")
    found = paths(workspace)
    assert "generated.py" in found
    assert "pkg/generated.py" not in found
    assert "pkg/deep/generated.py" not in found
    assert "pkg/local.txt" not in found
    assert "pkg/deep/local.txt" in found


def test_deeper_ignore_file_can_reinclude(workspace: Path) -> None:
    write(workspace, ".gitignore", "*.md\n")
    write(workspace, "docs/.gitignore", "!*.md\n")
    write(workspace, "README.md", "x\n")
    write(workspace, "docs/guide.md", "x\n")
    found = paths(workspace)
    assert "README.md" not in found
    assert "docs/guide.md" in found


def test_kairoxignore_is_honoured_and_overrides_gitignore(workspace: Path) -> None:
    write(workspace, ".gitignore", "!secret.txt\n")
    write(workspace, ".kairoxignore", "secret.txt\nfixtures/\n")
    write(workspace, "secret.txt", "x\n")
    write(workspace, "fixtures/data.json", "{}\n")
    write(workspace, "main.py", "x\n")
    found = paths(workspace)
    assert found == [".gitignore", ".kairoxignore", "main.py"]


def test_vcs_and_cache_directories_are_never_walked(workspace: Path) -> None:
    write(workspace, ".git/config", "[core]\n")
    write(workspace, ".git/info/exclude", "excluded.txt\n")
    write(workspace, "node_modules/lib/index.js", "x\n")
    write(workspace, "__pycache__/m.cpython-311.pyc", "x\n")
    write(workspace, "excluded.txt", "x\n")
    write(workspace, "src/app.js", "x\n")
    result = walk_workspace(workspace)
    assert [f.path for f in result.files] == ["src/app.js"]
    assert result.ignored == 4  # .git, node_modules, __pycache__, excluded.txt


def test_oversized_files_are_skipped_with_a_reason(workspace: Path) -> None:
    write(workspace, "big.txt", "x" * 2048)
    write(workspace, "small.txt", "x" * 10)
    result = walk_workspace(workspace, max_file_bytes=1024)
    assert [f.path for f in result.files] == ["small.txt"]
    assert [(s.path, s.reason) for s in result.skipped] == [("big.txt", SkipReason.TOO_LARGE)]


def test_read_rejects_binary_and_non_utf8(workspace: Path) -> None:
    write(workspace, "image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(workspace, "latin1.txt", "café crème\n".encode("latin-1"))
    write(workspace, "ok.txt", "\ufeffcafé\n")
    by_path = {f.path: f for f in walk_workspace(workspace).files}
    with pytest.raises(FileSkipped) as binary:
        read_text_file(by_path["image.png"])
    assert binary.value.skipped.reason is SkipReason.BINARY
    with pytest.raises(FileSkipped) as latin:
        read_text_file(by_path["latin1.txt"])
    assert latin.value.skipped.reason is SkipReason.NOT_UTF8
    assert "byte 3" in latin.value.skipped.detail
    assert read_text_file(by_path["ok.txt"]).text == "café\n"  # BOM dropped


def test_file_growing_past_the_limit_after_the_walk_is_skipped(workspace: Path) -> None:
    path = write(workspace, "grows.txt", "x" * 10)
    (entry,) = walk_workspace(workspace, max_file_bytes=100).files
    path.write_text("x" * 500)
    with pytest.raises(FileSkipped) as caught:
        read_text_file(entry, max_file_bytes=100)
    assert caught.value.skipped.reason is SkipReason.TOO_LARGE


def test_special_files_and_dangling_links_do_not_stop_the_walk(workspace: Path) -> None:
    write(workspace, "a.txt", "x\n")
    os.mkfifo(workspace / "pipe")
    (workspace / "dangling").symlink_to(workspace / "missing-target")
    (workspace / "dirlink").symlink_to(workspace / "sub", target_is_directory=True)
    write(workspace, "sub/b.txt", "x\n")
    result = walk_workspace(workspace)
    assert [f.path for f in result.files] == ["a.txt", "sub/b.txt"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons == {
        "dangling": SkipReason.UNREADABLE,
        "dirlink": SkipReason.NOT_REGULAR,
        "pipe": SkipReason.NOT_REGULAR,
    }


def test_unreadable_directory_is_reported_not_fatal(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace, "locked/secret.txt", "x\n")
    write(workspace, "open/file.txt", "x\n")
    real_scandir = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(walker.os, "scandir", scandir)
    result = walk_workspace(workspace)
    assert [f.path for f in result.files] == ["open/file.txt"]
    assert [(s.path, s.reason, s.detail) for s in result.skipped] == [
        ("locked", SkipReason.UNREADABLE, "Permission denied")
    ]


def test_walking_a_file_is_an_invalid_input(workspace: Path) -> None:
    target = write(workspace, "file.txt", "x")
    with pytest.raises(InvalidInput, match="not a directory"):
        walk_workspace(target)
