"""What an untrusted workspace config may change in model profiles and local paths.

A cloned repository's ``.kairox/config.toml`` may pick a model that keeps everything on the
machine (a ``scripted:`` model, the embedded ``local`` model or a GGUF already in the home), or
another model of the provider the user already chose for that profile (its key variable belongs
to that provider). It may not send prompts to a provider the user did not choose, name a model
file elsewhere, widen a profile the user defined, starve its reply, or add system-prompt
instructions (they are ignored: untrusted text never enters the system prompt).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

# Below this many tokens a reply is starved; a repository may not lower a user's profile there.
MIN_UNTRUSTED_REPLY_TOKENS = 256
# Providers whose models run somewhere else: prompts, workspace text and a key leave the machine.
REMOTE_PROVIDERS = ("openai", "anthropic")


def provider_of(model: str) -> str:
    """``openai``, ``anthropic``, ``local``, ``scripted`` or the text itself when unknown."""
    text = model.strip()
    return text.partition(":")[0].strip() if ":" in text else text


def _local_model_allowed(model: str, home: Path) -> bool:
    """``scripted:...`` and plain ``local`` stay on the machine; ``local:<path>`` only when the
    file already sits in the home (a repository may not point at a model file elsewhere)."""
    kind = provider_of(model)
    if kind == "scripted" or model.strip() == "local":
        return True
    if kind != "local":
        return False
    path = Path(model.strip().partition(":")[2].strip()).expanduser()
    try:
        return path.resolve().is_relative_to(home.resolve())
    except (OSError, RuntimeError):
        return False


def _model_allowed(model: object, base: Mapping[str, object] | None, home: Path) -> bool:
    if not isinstance(model, str):
        return True  # not a choice of destination; validation reports the wrong type
    if _local_model_allowed(model, home):
        return True
    kind = provider_of(model)
    if kind not in REMOTE_PROVIDERS:
        return True  # an unknown spec: validation refuses it with the file and the key
    user_model = base.get("model") if base is not None else None
    # Only a model of the provider the user already sends this profile's data (and key) to.
    return isinstance(user_model, str) and provider_of(user_model) == kind


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
        if "model" in entry and not _model_allowed(entry["model"], base, home):
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
