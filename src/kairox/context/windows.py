"""Model windows: how many tokens a model reads and writes, and the prompt budget that leaves.

Known models carry their context window and output limit. A profile's ``context_window`` and
``headroom`` override them; headroom is the part of the window reserved for the reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

from kairox.core.errors import ConfigError, InvalidInput

T = TypeVar("T")

# Their argument is a file path, never a model name: a path that happens to contain "gpt-4o"
# must not pick up gpt-4o's window or tokenizer.
PATH_PROVIDERS = frozenset({"local", "scripted"})

DEFAULT_CONTEXT_WINDOW = 8192
HEADROOM_MAX_FRACTION = 4  # the default headroom never exceeds a quarter of the window

_PROVIDER = re.compile(r"[a-z][a-z0-9_.-]*")
_BOUNDARY = frozenset("-.:@_")


@dataclass(frozen=True, slots=True)
class ModelName:
    """A model spec split into its provider (if any) and the bare, lower-case model name."""

    provider: str | None
    name: str  # "" for the path providers (local, scripted)


def parse_model(model: str) -> ModelName:
    """Split ``provider:model``; ``local`` and ``scripted:<path>`` carry no model name."""
    text = model.strip()
    lowered = text.lower()
    if lowered in PATH_PROVIDERS:
        return ModelName(lowered, "")
    prefix, sep, rest = text.partition(":")
    provider: str | None = None
    if sep and rest and _PROVIDER.fullmatch(prefix.lower()) and prefix.lower() != "ft":
        provider = prefix.lower()
        text = rest.strip()
    if provider in PATH_PROVIDERS:
        return ModelName(provider, "")
    name = text.lower()
    if name.startswith("ft:"):  # OpenAI fine-tunes: ft:<base-model>:<org>::<id>
        name = name[3:]
    name = name.rsplit("/", 1)[-1]  # "openai/gpt-4o" as routers spell it
    return ModelName(provider, name)


def match_prefix(name: str, table: Mapping[str, T]) -> T | None:
    """The entry whose key is the longest prefix of ``name`` ending at a name boundary.

    ``gpt-4`` matches ``gpt-4-0613`` and ``gpt-4.5-preview`` but not ``gpt-4o``.
    """
    best: str | None = None
    for key in table:
        fits = name == key or (name.startswith(key) and name[len(key)] in _BOUNDARY)
        if fits and (best is None or len(key) > len(best)):
            best = key
    return None if best is None else table[best]


@dataclass(frozen=True, slots=True)
class ModelWindow:
    context_window: int  # tokens the model reads and writes in one request
    max_output: int  # the most tokens it can write in one reply


# Published limits. Keys match by prefix at a boundary, so dated snapshots resolve too
# (claude-sonnet-4-20250514, gpt-4o-2024-08-06).
MODEL_WINDOWS: Mapping[str, ModelWindow] = {
    "gpt-4o": ModelWindow(128_000, 16_384),
    "gpt-4o-2024-05-13": ModelWindow(128_000, 4_096),
    "gpt-4o-mini": ModelWindow(128_000, 16_384),
    "chatgpt-4o": ModelWindow(128_000, 16_384),
    "gpt-4.1": ModelWindow(1_047_576, 32_768),
    "gpt-4.5": ModelWindow(128_000, 16_384),
    "gpt-4-turbo": ModelWindow(128_000, 4_096),
    "gpt-4-1106-preview": ModelWindow(128_000, 4_096),
    "gpt-4-0125-preview": ModelWindow(128_000, 4_096),
    "gpt-4-vision-preview": ModelWindow(128_000, 4_096),
    "gpt-4": ModelWindow(8_192, 4_096),
    "gpt-3.5-turbo": ModelWindow(16_385, 4_096),
    "gpt-35-turbo": ModelWindow(16_385, 4_096),
    "gpt-5": ModelWindow(400_000, 128_000),
    "gpt-5-chat": ModelWindow(128_000, 16_384),
    "o1": ModelWindow(200_000, 100_000),
    "o1-mini": ModelWindow(128_000, 65_536),
    "o1-preview": ModelWindow(128_000, 32_768),
    "o3": ModelWindow(200_000, 100_000),
    "o3-mini": ModelWindow(200_000, 100_000),
    "o4-mini": ModelWindow(200_000, 100_000),
    "claude-3-haiku": ModelWindow(200_000, 4_096),
    "claude-3-sonnet": ModelWindow(200_000, 4_096),
    "claude-3-opus": ModelWindow(200_000, 4_096),
    "claude-3-5-sonnet": ModelWindow(200_000, 8_192),
    "claude-3-5-haiku": ModelWindow(200_000, 8_192),
    "claude-3-7-sonnet": ModelWindow(200_000, 64_000),
    "claude-sonnet-4": ModelWindow(200_000, 64_000),
    "claude-sonnet-4-5": ModelWindow(200_000, 64_000),
    "claude-haiku-4-5": ModelWindow(200_000, 64_000),
    "claude-opus-4": ModelWindow(200_000, 32_000),
    "claude-opus-4-1": ModelWindow(200_000, 32_000),
    "claude-opus-4-5": ModelWindow(200_000, 64_000),
    "smollm2": ModelWindow(8_192, 1_024),
}

# Providers whose argument is a path: the bundled SmolLM2 and the scripted test double.
PROVIDER_WINDOWS: Mapping[str, ModelWindow] = {
    "local": ModelWindow(8_192, 1_024),
    "scripted": ModelWindow(8_192, 1_024),
}


def lookup_window(model: str) -> ModelWindow | None:
    """The known window of a model spec, or None when the model is not in the table."""
    parsed = parse_model(model)
    if parsed.provider in PATH_PROVIDERS:
        return PROVIDER_WINDOWS[parsed.provider]
    return match_prefix(parsed.name, MODEL_WINDOWS)


WindowSource = Literal["model", "config", "default"]


@dataclass(frozen=True, slots=True)
class Budget:
    """The prompt budget of one model: ``budget = window - headroom``.

    ``window_source`` says where the window came from: the model table, the profile's config,
    or the conservative default for an unknown model (``window_estimated`` is then true).
    """

    window: int
    headroom: int
    budget: int
    window_source: WindowSource = "model"

    def __post_init__(self) -> None:
        if not (0 < self.headroom < self.window and self.budget == self.window - self.headroom):
            raise InvalidInput(
                f"inconsistent budget: window {self.window}, headroom {self.headroom}, "
                f"budget {self.budget}; budget must equal window - headroom and be positive"
            )

    @property
    def window_estimated(self) -> bool:
        return self.window_source == "default"


def default_headroom(window: int, known: ModelWindow | None) -> int:
    """The model's output limit capped to a quarter of the window; the quarter if unknown."""
    cap = window // HEADROOM_MAX_FRACTION
    wanted = cap if known is None else min(known.max_output, cap)
    return max(1, wanted)


def resolve_window(
    model: str,
    *,
    context_window: int | None = None,
    headroom: int | None = None,
    profile: str | None = None,
    file: str | None = None,
) -> Budget:
    """The budget for ``model``; config values override the table and are validated here.

    ``profile`` and ``file`` only name the config location in error messages.
    """
    where = f"profiles.{profile}." if profile else ""
    known = lookup_window(model)
    source: WindowSource
    if context_window is not None:
        window = _positive(context_window, f"{where}context_window", file, example=128_000)
        source = "config"
    elif known is not None:
        window, source = known.context_window, "model"
    else:
        window, source = DEFAULT_CONTEXT_WINDOW, "default"
    if headroom is None:
        reserve = default_headroom(window, known)
        if reserve >= window:
            raise ConfigError(
                f"context_window {window} is too small to hold a prompt and a reply",
                file=file,
                key=f"{where}context_window",
                fix="set it to the model's real context window, e.g. 8192",
            )
    else:
        reserve = _positive(headroom, f"{where}headroom", file, example=max(1, window // 4))
        if reserve >= window:
            raise ConfigError(
                f"headroom {reserve} leaves no room for the prompt in a window of {window} tokens",
                file=file,
                key=f"{where}headroom",
                fix=f"set headroom below {window} (e.g. {max(1, window // 4)}) "
                "or raise context_window",
            )
    return Budget(window=window, headroom=reserve, budget=window - reserve, window_source=source)


def _positive(value: object, key: str, file: str | None, *, example: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            f"expected a whole number of tokens, got {value!r}",
            file=file,
            key=key,
            fix=f"write a positive integer, e.g. {example}",
        )
    if value <= 0:
        raise ConfigError(
            f"must be positive, got {value}",
            file=file,
            key=key,
            fix=f"write a positive number of tokens, e.g. {example}",
        )
    return value
