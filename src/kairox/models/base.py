"""The model-provider contract: what a turn sends to a model and the typed items it streams back.

Every backend (openai, anthropic, local, scripted) implements ``ModelProvider``. Providers never
raise for provider or network failures; they end the stream with exactly one ``StreamFailed``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from kairox.core.config import ExtractMode
from kairox.core.events import Usage
from kairox.core.messages import ChatMessage, ToolCall

Purpose = Literal["reply", "summary", "extraction"]
FailureKind = Literal[
    "connection",
    "auth",
    "timeout",
    "disconnect",
    "rate_limit",
    "bad_request",
    "script_exhausted",
    "other",
]


def _freeze(value: object) -> object:
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """A tool the model may call. ``parameters`` is a JSON schema object.

    A JSON schema is open-ended, so it is the one place the model layer holds a mapping of
    ``str`` to ``object``. It is deep-frozen at construction (mappings become read-only views,
    lists become tuples); ``parameters_dict()`` returns a fresh plain copy for SDKs and JSON.
    """

    name: str
    description: str
    parameters: Mapping[str, object] = field(
        default_factory=lambda: MappingProxyType({"type": "object", "properties": {}})
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", _freeze(self.parameters))

    def parameters_dict(self) -> dict[str, object]:
        thawed = _thaw(self.parameters)
        assert isinstance(thawed, dict)
        return thawed

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolSpec):
            return NotImplemented
        return (self.name, self.description, self.parameters_dict()) == (
            other.name,
            other.description,
            other.parameters_dict(),
        )

    def __hash__(self) -> int:
        return hash(
            (self.name, self.description, json.dumps(self.parameters_dict(), sort_keys=True))
        )


class ProviderSettings(BaseModel):
    """How to reach and run a model; the profile config fills it, defaults suit local use.

    ``api_key_env`` names the environment variable holding the key (the key itself is never
    stored in config); ``model_path``, ``n_ctx`` and ``home`` apply to the local backend only.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=0, ge=0)
    model_path: str | None = None
    n_ctx: int | None = Field(default=None, ge=16)
    home: str | None = None  # where ``local`` finds pulled models (default: $KAIROX_HOME)


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """One model call.

    ``call_index`` is the 0-based count of earlier model calls with the same ``purpose`` in the
    same session (the runtime computes it from the session's events); the scripted provider uses
    it to pick its reply, the others ignore it.
    """

    messages: tuple[ChatMessage, ...]
    session_id: str
    call_index: int
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    purpose: Purpose = "reply"
    # A GBNF grammar the reply must follow; backends that cannot constrain decoding ignore it.
    grammar: str | None = None

    def __post_init__(self) -> None:
        if self.call_index < 0:
            raise ValueError(f"call_index must be >= 0, got {self.call_index}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply text, as the model produced it (markers not yet removed)."""

    text: str


@dataclass(frozen=True)
class ToolCallRequested:
    """The model asks for a tool call; ``call.arguments`` is JSON text."""

    call: ToolCall


@dataclass(frozen=True)
class UsageReported:
    """Token counts for the call, reported once, after the last text or tool call."""

    usage: Usage


@dataclass(frozen=True)
class ReplyCut:
    """The reply did not end on its own: it reached the reply cap (``length``) or was stopped
    repeating itself (``loop``). Sent before ``UsageReported``."""

    reason: Literal["length", "loop"]


@dataclass(frozen=True)
class StreamFailed:
    """The call failed; always the last item of a stream. ``reason`` is one human line."""

    reason: str
    kind: FailureKind


StreamItem = TextDelta | ToolCallRequested | UsageReported | ReplyCut | StreamFailed


@runtime_checkable
class ModelProvider(Protocol):
    """A model Kairox can call: the public contract every backend implements.

    ``stream(request)`` yields ``TextDelta`` pieces of the reply (``<memory>`` markers included;
    Kairox filters them), ``ToolCallRequested`` for each tool call, then one ``UsageReported``.
    A provider never raises for a provider or network failure: it ends the stream with exactly
    one ``StreamFailed`` (a one-line reason and a ``FailureKind``). ``spec`` names the model in
    traces and picks its tokenizer and window (``openai:gpt-4o`` counts exactly; an unknown
    spec is estimated); ``model_name`` is recorded on each reply; ``aclose`` frees clients.

    Hand an instance to ``AppFacade.open(model=...)`` or ``kairox.Memory(model=...)``, or make
    it a spec everyone can name with ``kairox.models.register(prefix, factory)``.
    """

    @property
    def spec(self) -> str:
        """The spec this provider was built from, e.g. ``openai:gpt-4o-mini``."""
        ...

    @property
    def model_name(self) -> str:
        """The model name recorded on completed messages."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Checkable(Protocol):
    """A provider that can tell, without a call, that no call can succeed (no API key)."""

    def unusable(self) -> StreamFailed | None:
        """The failure every call would end in, or None when a call may be tried."""
        ...


@runtime_checkable
class Preloadable(Protocol):
    """A provider whose model is loaded into this process (the embedded ``local`` model).

    Surfaces show "loading model…" while ``loaded`` is False, and the long-running ones
    (``chat``, ``serve``) call ``preload`` at start so the first turn does not wait for it.
    """

    @property
    def loaded(self) -> bool: ...

    async def preload(self) -> None: ...


@runtime_checkable
class Noticed(Protocol):
    """A provider with something to tell the user once per session (``ModelNotice``): its
    limits, given the ``[memory] extract`` mode that is on."""

    def notice_for(self, extract: ExtractMode) -> str | None: ...


@dataclass(frozen=True)
class ModelReply:
    """A whole stream gathered: for callers that do not need the deltas (e.g. summaries)."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage | None
    failure: StreamFailed | None

    @property
    def ok(self) -> bool:
        return self.failure is None


async def collect(items: AsyncIterator[StreamItem]) -> ModelReply:
    """Drain a stream into a ``ModelReply``."""
    parts: list[str] = []
    calls: list[ToolCall] = []
    usage: Usage | None = None
    failure: StreamFailed | None = None
    async for item in items:
        match item:
            case TextDelta(text=text):
                parts.append(text)
            case ToolCallRequested(call=call):
                calls.append(call)
            case UsageReported(usage=reported):
                usage = reported
            case StreamFailed():
                failure = item
    return ModelReply(text="".join(parts), tool_calls=tuple(calls), usage=usage, failure=failure)


def text_chunks(text: str, size: int) -> Sequence[str]:
    """Split ``text`` into pieces of ``size`` characters (the last may be shorter)."""
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    return [text[i : i + size] for i in range(0, len(text), size)]
