"""Model providers and the registry that builds one from a spec string such as ``openai:gpt-4o``.

``ModelProvider`` is the public contract a backend implements; ``register(prefix, factory)`` adds
a spec prefix of your own. Backends are imported only when a spec asks for them, so a missing
optional dependency fails with ``MissingExtra`` for that backend alone.
"""

from __future__ import annotations

from kairox.core.backends import BackendTraits
from kairox.models.base import (
    Checkable,
    FailureKind,
    ModelProvider,
    ModelReply,
    ModelRequest,
    Noticed,
    Preloadable,
    ProviderSettings,
    Purpose,
    ReplyCut,
    StreamFailed,
    StreamItem,
    TextDelta,
    ToolCallRequested,
    ToolSpec,
    UsageReported,
    collect,
)
from kairox.models.registry import (
    Backend,
    ParsedSpec,
    ProviderFactory,
    backend,
    create_provider,
    describe,
    parse_spec,
    prefixes,
    register,
    restore,
    spec_forms,
    unregister,
)

__all__ = [
    "Backend",
    "BackendTraits",
    "Checkable",
    "FailureKind",
    "ModelProvider",
    "ModelReply",
    "ModelRequest",
    "Noticed",
    "ParsedSpec",
    "Preloadable",
    "ProviderFactory",
    "ProviderSettings",
    "Purpose",
    "ReplyCut",
    "StreamFailed",
    "StreamItem",
    "TextDelta",
    "ToolCallRequested",
    "ToolSpec",
    "UsageReported",
    "backend",
    "collect",
    "create_provider",
    "describe",
    "parse_spec",
    "prefixes",
    "register",
    "restore",
    "spec_forms",
    "unregister",
]
