"""The ``anthropic:<model>`` backend: the Messages API, streamed via the official SDK.

System messages go to the ``system`` parameter, tool calls travel as ``tool_use`` content blocks,
and usage comes from ``message_start`` and ``message_delta``. Failures end the stream as one item.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator

import anthropic
from anthropic import AsyncAnthropic, omit
from anthropic.types import (
    AssistantMessageParam,
    InputJSONDelta,
    MessageParam,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    TextBlock,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlock,
    ToolUseBlockParam,
    UserMessageParam,
)
from anthropic.types import TextDelta as AnthropicTextDelta

from kairox.core.events import Usage
from kairox.core.messages import ChatMessage, ToolCall, opening_notes_as_system
from kairox.models.base import (
    ModelRequest,
    ProviderSettings,
    StreamFailed,
    StreamItem,
    TextDelta,
    ToolCallRequested,
    ToolSpec,
    UsageReported,
)
from kairox.models.failures import (
    DISCONNECT_REASON,
    FailureContext,
    SdkErrors,
    api_key,
    missing_key,
    sdk_failure,
)

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 1024  # the Messages API requires max_tokens

ANTHROPIC_ERRORS = SdkErrors(
    connection=anthropic.APIConnectionError,
    timeout=anthropic.APITimeoutError,
    auth=anthropic.AuthenticationError,
    permission=anthropic.PermissionDeniedError,
    rate_limit=anthropic.RateLimitError,
    bad_request=anthropic.BadRequestError,
    not_found=anthropic.NotFoundError,
    unprocessable=anthropic.UnprocessableEntityError,
    status=anthropic.APIStatusError,
    api_error=anthropic.APIError,
)

_Block = TextBlockParam | ToolUseBlockParam | ToolResultBlockParam


def _tool_input(arguments: str) -> dict[str, object]:
    try:
        value = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def to_anthropic_messages(messages: tuple[ChatMessage, ...]) -> tuple[str, list[MessageParam]]:
    """Split out the system text (all system messages, joined) and build alternating turns."""
    system: list[str] = []
    turns: list[tuple[str, list[_Block]]] = []
    for m in opening_notes_as_system(messages):  # the first message must be the user's
        blocks: list[_Block] = []
        if m.role == "system":
            system.append(m.content)
            continue
        if m.role == "tool":
            role = "user"
            blocks.append(
                {"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}
            )
        else:
            role = m.role
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for call in m.tool_calls:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": _tool_input(call.arguments),
                    }
                )
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)  # the API wants roles to alternate
        else:
            turns.append((role, blocks))
    params: list[MessageParam] = []
    for role, blocks in turns:
        if role == "user":
            params.append(UserMessageParam(role="user", content=blocks))
        else:
            params.append(AssistantMessageParam(role="assistant", content=blocks))
    return "\n\n".join(system), params


def to_anthropic_tools(tools: tuple[ToolSpec, ...]) -> list[ToolParam]:
    return [
        {
            "name": t.name,
            "description": t.description,
            "input_schema": t.parameters_dict(),
        }
        for t in tools
    ]


class AnthropicProvider:
    """Streams replies from the Anthropic Messages API (or a compatible server)."""

    def __init__(self, model: str, *, settings: ProviderSettings) -> None:
        self._model = model
        self._settings = settings
        self._base_url = (
            settings.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        )
        self._key_env = settings.api_key_env or DEFAULT_KEY_ENV
        self._client: AsyncAnthropic | None = None
        self._ctx = FailureContext(
            endpoint=self._base_url,
            api_key_env=self._key_env,
            model=model,
            timeout_s=settings.timeout_s,
        )

    @property
    def spec(self) -> str:
        return f"anthropic:{self._model}"

    @property
    def model_name(self) -> str:
        return self._model

    def _get_client(self) -> AsyncAnthropic | None:
        if self._client is None:
            key = api_key(self._key_env, self._base_url)
            if key is None:
                return None
            self._client = AsyncAnthropic(
                base_url=self._base_url,
                api_key=key,
                timeout=self._settings.timeout_s,
                max_retries=self._settings.max_retries,
            )
        return self._client

    def unusable(self) -> StreamFailed | None:
        if api_key(self._key_env, self._base_url) is None:
            return missing_key(self._key_env, self._base_url)
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        client = self._get_client()
        if client is None:
            yield missing_key(self._key_env, self._base_url)
            return
        system, messages = to_anthropic_messages(request.messages)
        tools = to_anthropic_tools(request.tools)
        try:
            events = await client.messages.create(
                model=self._model,
                max_tokens=request.max_tokens or DEFAULT_MAX_TOKENS,
                messages=messages,
                system=system or omit,
                tools=tools or omit,
                stream=True,
            )
        except Exception as exc:
            yield sdk_failure(exc, ANTHROPIC_ERRORS, self._ctx)
            return
        prompt_tokens = 0
        completion_tokens = 0
        calls: dict[int, ToolCall] = {}
        finished = False
        failure: StreamFailed | None = None
        try:
            async for event in events:
                if isinstance(event, RawMessageStartEvent):
                    prompt_tokens = event.message.usage.input_tokens
                    completion_tokens = event.message.usage.output_tokens
                elif isinstance(event, RawContentBlockStartEvent):
                    block = event.content_block
                    if isinstance(block, ToolUseBlock):
                        calls[event.index] = ToolCall(id=block.id, name=block.name, arguments="")
                    elif isinstance(block, TextBlock) and block.text:
                        yield TextDelta(block.text)
                elif isinstance(event, RawContentBlockDeltaEvent):
                    delta = event.delta
                    if isinstance(delta, AnthropicTextDelta) and delta.text:
                        yield TextDelta(delta.text)
                    elif isinstance(delta, InputJSONDelta) and event.index in calls:
                        call = calls[event.index]
                        calls[event.index] = call.model_copy(
                            update={"arguments": call.arguments + delta.partial_json}
                        )
                elif isinstance(event, RawMessageDeltaEvent):
                    completion_tokens = event.usage.output_tokens
                elif isinstance(event, RawMessageStopEvent):
                    finished = True
        except Exception as exc:
            failure = sdk_failure(exc, ANTHROPIC_ERRORS, self._ctx)
        finally:
            await events.close()
        if failure is None and not finished:
            failure = StreamFailed(DISCONNECT_REASON, "disconnect")
        if failure is not None:
            yield failure
            return
        for _, call in sorted(calls.items()):
            yield ToolCallRequested(
                call if call.arguments else call.model_copy(update={"arguments": "{}"})
            )
        yield UsageReported(Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens))

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
