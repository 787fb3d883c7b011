"""Model providers and the registry that builds one from a spec string such as ``openai:gpt-4o``.

Backends are imported only when a spec asks for them, so a missing optional dependency fails
with ``MissingExtra`` for that backend alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from kairox.core.errors import ConfigError
from kairox.models.base import (
    FailureKind,
    ModelProvider,
    ModelReply,
    ModelRequest,
    Preloadable,
    ProviderSettings,
    Purpose,
    StreamFailed,
    StreamItem,
    TextDelta,
    ToolCallRequested,
    ToolSpec,
    UsageReported,
    collect,
)

__all__ = [
    "SENDS_TOOL_DEFINITIONS",
    "SPEC_FORMS",
    "FailureKind",
    "ModelProvider",
    "ModelReply",
    "ModelRequest",
    "ParsedSpec",
    "Preloadable",
    "ProviderSettings",
    "Purpose",
    "StreamFailed",
    "StreamItem",
    "TextDelta",
    "ToolCallRequested",
    "ToolSpec",
    "UsageReported",
    "collect",
    "create_provider",
    "parse_spec",
]

SPEC_FORMS = (
    "openai:<model>, anthropic:<model>, local, local:<path-to-gguf>, scripted:<path-to-jsonl>"
)
ProviderKind = Literal["openai", "anthropic", "local", "scripted"]
# The backends that send tool definitions (JSON schemas) beside the messages of a request: the
# budget counts them. ``local`` folds tool traffic into text; ``scripted`` sends nothing.
SENDS_TOOL_DEFINITIONS: frozenset[ProviderKind] = frozenset({"openai", "anthropic"})


@dataclass(frozen=True)
class ParsedSpec:
    kind: ProviderKind
    argument: str | None  # the model name or path; None only for plain ``local``


def parse_spec(spec: str) -> ParsedSpec:
    """Split a spec into backend kind and argument; unknown or incomplete specs are ConfigErrors."""
    text = spec.strip()
    if text == "local":
        return ParsedSpec("local", None)
    prefix, sep, argument = text.partition(":")
    argument = argument.strip()
    if sep and prefix in ("openai", "anthropic", "local", "scripted"):
        if not argument:
            what = "path" if prefix in ("local", "scripted") else "model name"
            raise ConfigError(
                f"model spec '{spec}' has no {what} after '{prefix}:'",
                key="model",
                fix=f"use one of {SPEC_FORMS}",
            )
        kind = cast(ProviderKind, prefix)  # the tuple check above narrowed it
        return ParsedSpec(kind, argument)
    raise ConfigError(f"unknown model spec '{spec}'", key="model", fix=f"use one of {SPEC_FORMS}")


def create_provider(spec: str, *, settings: ProviderSettings | None = None) -> ModelProvider:
    """Build the provider a spec names. Raises ConfigError or MissingExtra, never network errors."""
    parsed = parse_spec(spec)
    conf = settings or ProviderSettings()
    if parsed.kind == "scripted":
        from kairox.models.scripted import ScriptedProvider

        assert parsed.argument is not None
        return ScriptedProvider.from_file(parsed.argument)
    if parsed.kind == "openai":
        from kairox.models.openai import OpenAIProvider

        assert parsed.argument is not None
        return OpenAIProvider(parsed.argument, settings=conf)
    if parsed.kind == "anthropic":
        from kairox.models.anthropic import AnthropicProvider

        assert parsed.argument is not None
        return AnthropicProvider(parsed.argument, settings=conf)
    from kairox.models.local import LocalProvider

    return LocalProvider(
        model_path=parsed.argument or conf.model_path, n_ctx=conf.n_ctx, spec=spec.strip()
    )
