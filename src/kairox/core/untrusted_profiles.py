"""What an untrusted workspace config may change in model profiles and local paths.

A cloned repository's ``.kairox/config.toml`` may pick a model that keeps everything on the
machine (a backend registered as not networked: a ``scripted:`` model, plain ``local`` or
``local:NAME`` of a model pulled into the home), or
another model of the provider the user already chose for that profile (its key variable belongs
to that provider). It may not send prompts to a provider the user did not choose, name a model
file elsewhere, widen a profile the user defined, starve its reply, or add system-prompt
instructions (they are ignored: untrusted text never enters the system prompt).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kairox.core.backends import Describe, spec_prefix

# Below this many tokens a reply is starved; a repository may not lower a user's profile there.
MIN_UNTRUSTED_REPLY_TOKENS = 256


def _model_allowed(
    model: object, base: Mapping[str, object] | None, home: Path, describe: Describe
) -> bool:
    """A backend that stays on the machine, with an argument it accepts from an untrusted
    config (``local``: only a model pulled into the home, by name); else a model of the provider
    the user already sends this profile's data (and key) to. A prefix nobody registered counts
    as networked."""
    if not isinstance(model, str):
        return True  # not a choice of destination; validation reports the wrong type
    traits = describe(model)
    prefix = spec_prefix(model)
    if not traits.networked:
        check = traits.untrusted_argument
        argument = model.strip().partition(":")[2].strip()
        return check is None or check(argument, home)
    user_model = base.get("model") if base is not None else None
    return isinstance(user_model, str) and spec_prefix(user_model) == prefix


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _limit_ignored(key: str, value: object, base: Mapping[str, object]) -> bool:
    """A number a repository may not set on a profile the user defined."""
    new, old = _int(value), _int(base.get(key))
    if new is None:
        return False
    if key == "context_window":  # never wider than the user's window (lowering is harmless)
        return old is None or new > old
    # headroom, max_output_tokens: never below the floor, unless the user's own value is lower
    return new < MIN_UNTRUSTED_REPLY_TOKENS and (old is None or new < old)


def strip_profiles(
    profiles: Mapping[str, object],
    user_profiles: Mapping[str, Mapping[str, object]],
    *,
    home: Path,
    describe: Describe,
) -> tuple[dict[str, object], list[str], set[str]]:
    """The profiles an untrusted workspace may define, the keys ignored, and the aliases dropped
    whole (a new profile whose model would leave the machine)."""
    kept: dict[str, object] = {}
    ignored: list[str] = []
    dropped: set[str] = set()
    for alias, profile in profiles.items():
        if not isinstance(profile, Mapping):
            kept[alias] = profile
            continue
        base = user_profiles.get(alias)
        entry = dict(profile)
        if "model" in entry and not _model_allowed(entry["model"], base, home, describe):
            if base is None:
                ignored.append(f"profiles.{alias}")
                dropped.add(alias)
                continue
            ignored.append(f"profiles.{alias}.model")
            del entry["model"]
        if "instructions" in entry:
            ignored.append(f"profiles.{alias}.instructions")
            del entry["instructions"]
        if base is not None:
            for key in ("context_window", "headroom", "max_output_tokens"):
                if key in entry and _limit_ignored(key, entry[key], base):
                    ignored.append(f"profiles.{alias}.{key}")
                    del entry[key]
        kept[alias] = entry
    return kept, ignored, dropped


def local_path_allowed(value: object, workspace: Path) -> bool:
    """A knowledge base's local ``path`` from an untrusted workspace: inside the workspace's real
    path (relative paths resolve against it, symlinks are followed)."""
    if not isinstance(value, str):
        return True  # validation reports the wrong type
    root = workspace.resolve()
    path = Path(value).expanduser()
    try:
        return (root / path).resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False
