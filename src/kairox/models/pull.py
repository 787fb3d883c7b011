"""``kairox models pull``: download a GGUF model into the home, resumably, verified by SHA-256.

The file streams into ``NAME.gguf.part``; an interrupted download keeps the part and the next pull
asks for the rest (an HTTP Range request). Only a file whose SHA-256 equals the expected one is
moved in place as ``NAME.gguf`` (with ``NAME.json`` beside it: URL, hash, size, licence); a wrong
hash, or a failed write (a full disk), deletes the part, so nothing is left behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from kairox.core.errors import InvalidInput, ModelError, NotFound
from kairox.models.catalog import KNOWN, describe, models_dir

Progress = Callable[[int, int | None], None]
CHUNK = 1 << 20
_HEX = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True, slots=True)
class PullReport:
    name: str
    path: Path
    size: int
    sha256: str
    resumed_from: int  # bytes already there from an interrupted pull
    already: bool = False  # the verified file was already in place


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _source(name: str, url: str | None, sha256: str | None) -> tuple[str, str, str]:
    entry = KNOWN.get(name)
    if url is None and (entry is None or entry.url is None):
        known = ", ".join(n for n, m in KNOWN.items() if m.url)
        raise InvalidInput(
            f"unknown model '{name}'; pull one of: {known}, or give --url URL --sha256 HEX"
        )
    chosen_url = url or (entry.url if entry else None)
    # A known model's official hash checks its file from any URL (a mirror); a mismatch keeps
    # nothing, and --sha256 names another file's hash.
    chosen_sha = (sha256 or (entry.sha256 if entry else None) or "").lower()
    if not chosen_sha:
        raise InvalidInput(
            f"no official SHA-256 is known for {name}; give the publisher's with --sha256 HEX"
        )
    if not _HEX.match(chosen_sha):
        raise InvalidInput("--sha256 must be 64 hexadecimal characters")
    assert chosen_url is not None
    if not chosen_url.startswith(("https://", "http://")):
        raise InvalidInput(f"--url must be an http(s) URL, got '{chosen_url}'")
    return chosen_url, chosen_sha, entry.licence if entry else "unknown"


def pull(
    name: str,
    *,
    url: str | None = None,
    sha256: str | None = None,
    home: str | Path | None = None,
    progress: Progress | None = None,
    timeout_s: float = 60.0,
) -> PullReport:
    """Download model ``name`` (a known one, or any GGUF with ``url`` and ``sha256``)."""
    if not _NAME.match(name):
        raise InvalidInput(
            f"model name '{name}' must be letters, digits, '.', '_' or '-' (it names a file)"
        )
    source, expected, licence = _source(name, url, sha256)
    root = models_dir(home)
    root.mkdir(parents=True, exist_ok=True)
    target, part = root / f"{name}.gguf", root / f"{name}.gguf.part"
    if target.is_file() and sha256_of(target) == expected:
        return PullReport(name, target, target.stat().st_size, expected, 0, already=True)
    have = part.stat().st_size if part.is_file() else 0
    try:
        _download(source, part, have, progress, timeout_s)
    except OSError as exc:  # a full disk, a file size limit: nothing half-written is kept
        part.unlink(missing_ok=True)
        raise ModelError(
            "download",
            f"{name}: cannot write {part} ({exc.strerror or type(exc).__name__}); nothing was "
            "kept: free some space (or raise the file size limit) and pull again",
        ) from None
    digest = sha256_of(part)
    if digest != expected:
        part.unlink(missing_ok=True)
        raise ModelError(
            "download",
            f"{name}: the file's SHA-256 is {digest}, expected {expected}; nothing was kept",
        )
    size = part.stat().st_size
    os.replace(part, target)
    meta = {"name": name, "url": source, "sha256": expected, "size": size, "licence": licence}
    (root / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return PullReport(name, target, size, expected, have)


def _download(url: str, part: Path, have: int, progress: Progress | None, timeout: float) -> None:
    headers = {"Range": f"bytes={have}-"} if have else {}
    done = have
    total: int | None = None
    try:
        with httpx.stream(
            "GET", url, headers=headers, follow_redirects=True, timeout=timeout
        ) as response:
            if response.status_code == 416 and have:
                return  # the part is already whole: verify it
            if response.status_code not in (200, 206):
                raise ModelError("download", f"HTTP {response.status_code} from {url}")
            if response.status_code == 200:
                done = 0  # the server sends the whole file again
            length = response.headers.get("content-length")
            total = done + int(length) if length and length.isdigit() else None
            with part.open("ab" if done else "wb") as out:
                if progress is not None:
                    progress(done, total)
                for block in response.iter_bytes(CHUNK):
                    out.write(block)
                    done += len(block)
                    if progress is not None:
                        progress(done, total)
    except httpx.HTTPError as exc:
        raise ModelError("download", _interrupted(url, exc, done, total)) from None
    if total is not None and done < total:
        raise ModelError(
            "download",
            f"interrupted after {done:,} of {total:,} bytes; run the same command again to resume",
        )


def _interrupted(url: str, exc: httpx.HTTPError, done: int, total: int | None) -> str:
    """One line for a download that broke off: the host, what failed, and whether a rerun
    resumes (only when some bytes are kept) or starts over."""
    host = httpx.URL(url).host or url
    what = f"{type(exc).__name__}: {' '.join(str(exc).split())}" if str(exc) else type(exc).__name__
    if done == 0:
        return (
            f"could not download from {host} ({what}); nothing was downloaded: check the "
            "network (or the proxy) and run the same command again"
        )
    of = f" of {total:,}" if total else ""
    return (
        f"download from {host} interrupted after {done:,}{of} bytes ({what}); run the same "
        "command again to resume"
    )


def remove(name: str, *, home: str | Path | None = None) -> list[Path]:
    """Delete a pulled model (and any partial download of it); returns the files removed."""
    if not _NAME.match(name):
        raise NotFound("model", name)
    root = models_dir(home)
    files = [root / f"{name}{suffix}" for suffix in (".gguf", ".json", ".gguf.part")]
    removed = [f for f in files if f.is_file()]
    if not removed:
        raise NotFound("model", name)
    for f in removed:
        f.unlink()
    return removed


def describe_pulled(name: str, home: str | Path | None = None) -> str:
    """One line for a model: its title, licence and size."""
    model = describe(name, models_dir(home) / f"{name}.json")
    size = f"{model.size / 1e6:,.0f} MB" if model.size else "size unknown"
    return f"{model.title} · {model.licence} · {size}"
