"""What an untrusted workspace config may change in the user's memory and tool policy: only
tighten it. A repository may ask for approval where the user accepts, allow fewer proposals per
turn, extract less, and read smaller files, never the reverse (``config show`` lists the rest as
ignored).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

# How much each ``extract`` mode does: ``off`` no extraction call, ``inline`` markers in the
# reply, ``after_turn`` also one extraction call after each turn.
_EXTRACT_RANK = {"off": 0, "inline": 1, "after_turn": 2}
_AFTER_UNTRUSTED_RANK = {"ask": 0, "accept": 1}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _looser(rank: Mapping[str, int]) -> Callable[[object, object], bool]:
    def check(new: object, old: object) -> bool:
        if not isinstance(new, str) or not isinstance(old, str) or new not in rank:
            return False  # validation reports a value that is not one of the modes
        return rank[new] > rank.get(old, len(rank))

    return check


def _larger(new: object, old: object) -> bool:
    a, b = _int(new), _int(old)
    return a is not None and b is not None and a > b


def _true_over_false(new: object, old: object) -> bool:
    return new is True and old is False


# (section, key) -> whether the repository's value loosens the user's.
_RULES: dict[tuple[str, str], Callable[[object, object], bool]] = {
    ("memory", "session_after_untrusted"): _looser(_AFTER_UNTRUSTED_RANK),
    ("memory", "max_proposals_per_turn"): _larger,
    ("memory", "extract"): _looser(_EXTRACT_RANK),
    ("memory", "auto_accept_session"): _true_over_false,
    ("tools", "read_file_max_bytes"): _larger,
}


def _defaults() -> dict[tuple[str, str], object]:
    from kairox.core.config import MemoryConfig, ToolsConfig

    memory, tools = MemoryConfig(), ToolsConfig()
    return {
        ("memory", "session_after_untrusted"): memory.session_after_untrusted,
        ("memory", "max_proposals_per_turn"): memory.max_proposals_per_turn,
        ("memory", "extract"): memory.extract,
        ("memory", "auto_accept_session"): memory.auto_accept_session,
        ("tools", "read_file_max_bytes"): tools.read_file_max_bytes,
    }


def _section(data: Mapping[str, object], name: str) -> Mapping[str, object]:
    value = data.get(name)
    return value if isinstance(value, Mapping) else {}


def user_value(already: Mapping[str, object], section: str, key: str) -> object:
    """The user's value of ``section.key`` (their file, else the built-in default)."""
    found = _section(already, section)
    return found[key] if key in found else _defaults()[(section, key)]


def strip_policy(
    data: dict[str, object], already: Mapping[str, object]
) -> tuple[dict[str, object], list[str]]:
    """Drop the policy values of a workspace file that loosen the user's (``already``: the
    config merged before it). A profile's ``extract`` may not do more than the user's extract for
    that profile."""
    out = dict(data)
    ignored: list[str] = []
    for (section, key), loosens in _RULES.items():
        values = _section(out, section)
        if key in values and loosens(values[key], user_value(already, section, key)):
            ignored.append(f"{section}.{key}")
            out[section] = {k: v for k, v in values.items() if k != key}
    profiles = out.get("profiles")
    if isinstance(profiles, Mapping):
        user_profiles = _section(already, "profiles")
        user_extract = user_value(already, "memory", "extract")
        kept: dict[str, object] = {}
        for alias, profile in profiles.items():
            if isinstance(profile, Mapping) and "extract" in profile:
                mine = user_profiles.get(alias)
                own = mine.get("extract") if isinstance(mine, Mapping) else None
                if _looser(_EXTRACT_RANK)(profile["extract"], own or user_extract):
                    ignored.append(f"profiles.{alias}.extract")
                    profile = {k: v for k, v in profile.items() if k != "extract"}
            kept[alias] = profile
        out["profiles"] = kept
    return out, ignored
