"""Layered config: defaults, then the user file, the workspace file, then environment variables.

Each leaf value remembers where it came from, so ``kairox config show`` can say so and a
validation error can name the file that holds the bad key.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.core.backends import Describe, describe_unknown
from kairox.core.errors import ConfigError

if TYPE_CHECKING:  # the config models load with the first config, not with every command
    from pydantic import ValidationError

    from kairox.core.config import KairoxConfig
    from kairox.core.kb_config import KnowledgeBaseConfig
from kairox.core.paths import resolve_home
from kairox.core.trust import (
    TRUST_FILENAME,
    TrustStore,
    WorkspaceTrust,
    ignored_notice,
    strip_untrusted,
)

DEFAULTS = "defaults"
ENV_PREFIX = "KAIROX_"
# Environment variables that override single keys (documented in the README).
ENV_KEYS = {"KAIROX_PROFILE": "default_profile", "KAIROX_STORE_URL": "store.url"}


@dataclass
class LoadedConfig:
    config: KairoxConfig
    sources: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    knowledge_bases: dict[str, KnowledgeBaseConfig] = field(default_factory=dict)
    trust: WorkspaceTrust | None = None
    ignored: tuple[str, ...] = ()
    """Keys of an untrusted workspace file that were not applied (see ``kairox.core.trust``)."""

    def notice(self) -> str | None:
        """One line naming the ignored keys and the command that trusts the workspace."""
        if not self.ignored or self.trust is None:
            return None
        return ignored_notice(self.trust.workspace, self.trust.config_file, self.ignored)

    def source_of(self, dotted: str) -> str:
        """Where ``dotted`` was set: the file or variable that set that key (a table's file for
        the table), else the defaults. A key a file's table leaves out is a default: the file
        that defines ``[profiles.api]`` with only ``model`` did not set its ``headroom``."""
        return self.sources.get(dotted, DEFAULTS)

    def set_by_user(self, dotted: str) -> bool:
        """Whether a file or an environment variable set ``dotted`` (not a built-in default)."""
        return self.source_of(dotted) != DEFAULTS


def user_config_path() -> Path:
    explicit = os.environ.get("KAIROX_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("kairox", appauthor=False)) / "config.toml"


def _check_explicit_user_file() -> None:
    """``$KAIROX_CONFIG`` naming a file that is not there is an error, never a silent default."""
    explicit = os.environ.get("KAIROX_CONFIG")
    if explicit and not Path(explicit).expanduser().is_file():
        raise ConfigError(
            "$KAIROX_CONFIG names a file that does not exist",
            file=explicit,
            fix="create the file, correct the path, or unset KAIROX_CONFIG",
        )


def workspace_config_path(workspace: Path) -> Path:
    return workspace / ".kairox" / "config.toml"


def load_config(
    workspace: Path | None = None,
    *,
    user_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    describe: Describe = describe_unknown,
) -> LoadedConfig:
    """Merge the layers. A workspace file not trusted in ``home`` (default: the resolved home)
    cannot set endpoints, key variables, remote knowledge bases or a networked embedder, nor a
    model whose backend ``describe`` (``kairox.models.describe``) does not call local: without
    it, every model counts as networked."""
    from pydantic import ValidationError

    from kairox.core.config import KairoxConfig
    from kairox.core.kb_config import parse_knowledge_bases

    env = os.environ if env is None else env
    merged: dict[str, object] = {}
    sources: dict[str, str] = {}
    files: list[Path] = []
    ignored: list[str] = []
    trust: WorkspaceTrust | None = None
    if user_file is None:
        _check_explicit_user_file()
    layers = [user_file or user_config_path()]
    if workspace is not None:
        home = home or resolve_home()
        layers.append(workspace_config_path(workspace))
        store = TrustStore(home)
        trust = store.status(workspace)
    for path in layers:
        if not path.is_file():
            continue
        data, digest = _read_toml(path)
        untrusted = trust is not None and not store.trusts(trust.config_file, digest)
        if workspace is not None and path == layers[-1] and untrusted:
            assert home is not None
            data, ignored = strip_untrusted(
                data, merged, workspace=workspace, home=home, describe=describe
            )
        _merge(merged, data, sources, str(path), prefix="")
        files.append(path)
    for var, dotted in ENV_KEYS.items():
        if env.get(var):
            _merge(merged, _nest(dotted, env[var]), sources, f"${var}", prefix="")
    try:
        config = KairoxConfig.model_validate(_with_default_profiles(merged, sources))
    except ValidationError as exc:
        raise _config_error(exc, sources) from None
    knowledge_bases: dict[str, KnowledgeBaseConfig] = {}
    for kb_id, raw in config.knowledge_bases.items():
        source = sources.get(f"knowledge_bases.{kb_id}", DEFAULTS)
        # Relative paths in the workspace file resolve against the workspace itself.
        in_workspace = workspace is not None and source == str(workspace_config_path(workspace))
        base = workspace if in_workspace and workspace is not None else Path(source).parent
        knowledge_bases.update(parse_knowledge_bases({kb_id: raw}, file=source, base_dir=base))
    return LoadedConfig(
        config=config,
        sources=sources,
        files=files,
        knowledge_bases=knowledge_bases,
        trust=trust,
        ignored=tuple(ignored),
    )


def _with_default_profiles(merged: dict[str, object], sources: dict[str, str]) -> dict[str, object]:
    """The built-in profiles a file did not define, recorded as coming from the defaults. A
    built-in profile a file changed without naming its model (a repository's refused model
    was dropped) keeps the built-in values it did not set."""
    from kairox.core.config import DEFAULT_PROFILES

    out = dict(merged)
    raw = out.get("profiles", {})
    if not isinstance(raw, dict):
        return out  # validation reports the wrong type, with its file and key
    profiles: dict[str, object] = dict(raw)
    for alias, profile in DEFAULT_PROFILES.items():
        current = profiles.get(alias)
        if alias not in profiles:
            profiles[alias] = profile.model_dump(exclude_none=True)
            sources[f"profiles.{alias}"] = DEFAULTS
        elif isinstance(current, dict) and "model" not in current:
            builtin = profile.model_dump(exclude_none=True)
            for key in builtin.keys() - current.keys():
                sources[f"profiles.{alias}.{key}"] = DEFAULTS
            profiles[alias] = {**builtin, **current}
    out["profiles"] = profiles
    return out


def user_store_url() -> str | None:
    """``[store] url`` of the user's config file, read without building the whole config (every
    command opens the store; the config models load only when a command needs them). The store is
    the user's choice: a workspace file never sets it."""
    _check_explicit_user_file()
    path = user_config_path()
    if not path.is_file():
        return None
    data, _digest = _read_toml(path)
    store = data.get("store")
    url = store.get("url") if isinstance(store, dict) else None
    if url is None:
        return None
    if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            "store.url must be a postgresql:// URL (or absent for SQLite)",
            file=str(path),
            fix='write store.url = "postgresql://user:password@host/db" or remove it',
        )
    return url


def _read_toml(path: Path) -> tuple[dict[str, object], str]:
    """The parsed file and the SHA-256 of exactly the bytes parsed (trust is bound to them)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"cannot read the file ({exc.strerror})",
            file=str(path),
            fix="check the file's permissions",
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"the file is not UTF-8 (invalid byte at offset {exc.start})",
            file=str(path),
            fix="save it as UTF-8",
        ) from None
    try:
        return tomllib.loads(text), hashlib.sha256(raw).hexdigest()
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"invalid TOML ({exc})", file=str(path), fix="correct the syntax at the position shown"
        ) from None
    except RecursionError:
        raise ConfigError(
            "the file nests too deeply", file=str(path), fix="flatten the nested tables"
        ) from None


def _nest(dotted: str, value: object) -> dict[str, object]:
    head, _, rest = dotted.partition(".")
    return {head: _nest(rest, value) if rest else value}


def _merge(
    into: dict[str, object],
    data: Mapping[str, object],
    sources: dict[str, str],
    source: str,
    *,
    prefix: str,
) -> None:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        current = into.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            _merge(current, value, sources, source, prefix=dotted + ".")
        elif isinstance(value, Mapping):
            fresh: dict[str, object] = {}
            into[key] = fresh
            _merge(fresh, value, sources, source, prefix=dotted + ".")
            sources.setdefault(dotted, source)
        else:
            into[key] = value
            sources[dotted] = source


def _config_error(exc: ValidationError, sources: dict[str, str]) -> ConfigError:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    best = DEFAULTS
    for key, src in sources.items():
        if loc == key or loc.startswith(key + "."):
            best = src
    fix = {
        "extra_forbidden": "remove the key or check its spelling",
        "missing": "add the key",
    }.get(first["type"], "use a valid value")
    return ConfigError(
        first["msg"], file=None if best == DEFAULTS else best, key=loc or None, fix=fix
    )


class ConfigCache:
    """One loaded config per workspace for the whole process (the facade owns the one instance).

    A long-running surface sees edits: an entry is reloaded when a file it was read from, the
    workspace file it lacked, or the home's trust list changes its modification time."""

    def __init__(self, home: Path | None = None, *, describe: Describe = describe_unknown) -> None:
        self.home = home
        self.describe = describe
        self._entries: dict[Path, tuple[_Stamp, LoadedConfig]] = {}

    def get(self, workspace: str | Path) -> LoadedConfig:
        root = Path(workspace).resolve()
        stamp = _stamp(root, self.home or resolve_home())
        entry = self._entries.get(root)
        if entry is None or entry[0] != stamp:
            loaded = load_config(root, home=self.home, describe=self.describe)
            self._entries[root] = (stamp, loaded)
            return loaded
        return entry[1]


_Stamp = tuple[tuple[str, tuple[int, int] | str | None], ...]


def _stamp(root: Path, home: Path) -> _Stamp:
    """What a workspace's config depends on: its files' and the trust list's modification times
    (None: absent) and the environment variables that override keys."""
    stamps: list[tuple[str, tuple[int, int] | str | None]] = []
    for path in (user_config_path(), workspace_config_path(root), home / TRUST_FILENAME):
        try:
            stat = path.stat()
            stamps.append((str(path), (stat.st_mtime_ns, stat.st_size)))
        except OSError:
            stamps.append((str(path), None))
    stamps.extend((var, os.environ.get(var)) for var in ENV_KEYS)
    return tuple(stamps)
