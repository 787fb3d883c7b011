"""The ``openai:<model>`` backend: any OpenAI-compatible chat endpoint, streamed by the SDK.

It maps the SDK's chunks to typed stream items (text, accumulated native tool calls, usage) and
every failure, including a server that vanishes mid-stream, to one final ``StreamFailed``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass

import openai
from openai import AsyncOpenAI, omit
from openai.types.chat import (
    ChatCompletionChunk,
    ChatCompletionMessageParam,
    ChatCompletionMessageToolCallParam,
    ChatCompletionToolParam,
)

from kairox.core.events import Usage
from kairox.core.messages import ChatMessage, ToolCall
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

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"

OPENAI_ERRORS = SdkErrors(
    connection=openai.APIConnectionError,
    timeout=openai.APITimeoutError,
    auth=openai.AuthenticationError,
    permission=openai.PermissionDeniedError,
    rate_limit=openai.RateLimitError,
    bad_request=openai.BadRequestError,
    not_found=openai.NotFoundError,
    unprocessable=openai.UnprocessableEntityError,
    status=openai.APIStatusError,
    api_error=openai.APIError,
)


def to_openai_messages(messages: tuple[ChatMessage, ...]) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = []
    for m in messages:
        if m.role == "system":
            out.append({"role": "system", "content": m.content})
        elif m.role == "user":
            out.append({"role": "user", "content": m.content})
        elif m.role == "tool":
            out.append({"role": "tool", "content": m.content, "tool_call_id": m.tool_call_id or ""})
        elif m.tool_calls:
            calls: list[ChatCompletionMessageToolCallParam] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": m.content or None, "tool_calls": calls})
        else:
            out.append({"role": "assistant", "content": m.content})
    return out


def to_openai_tools(tools: tuple[ToolSpec, ...]) -> list[ChatCompletionToolParam]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters_dict(),
            },
        }
        for t in tools
    ]


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class ToolCallAccumulator:
    """Joins streamed tool-call fragments (keyed by ``index``) into whole calls."""

    def __init__(self, call_index: int) -> None:
        self._call_index = call_index
        self._pending: dict[int, _PendingCall] = {}

    def add(self, chunk: ChatCompletionChunk) -> None:
        for choice in chunk.choices:
            for tc in choice.delta.tool_calls or ():
                slot = self._pending.setdefault(tc.index, _PendingCall())
                if tc.id:
                    slot.id = tc.id
                if tc.function is not None:
                    if tc.function.name and not slot.name:
                        slot.name = tc.function.name
                    if tc.function.arguments:
                        slot.arguments += tc.function.arguments

    def calls(self) -> list[ToolCall]:
        return [
            ToolCall(
                id=slot.id or f"call_{self._call_index}_{index}",
                name=slot.name,
                arguments=slot.arguments or "{}",
            )
            for index, slot in sorted(self._pending.items())
            if slot.name
        ]


class OpenAIProvider:
    """Streams chat completions from an OpenAI-compatible server."""

    def __init__(self, model: str, *, settings: ProviderSettings) -> None:
        self._model = model
        self._settings = settings
        self._base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self._key_env = settings.api_key_env or DEFAULT_KEY_ENV
        self._client: AsyncOpenAI | None = None
        self._stream_options_ok = True
        self._ctx = FailureContext(
            endpoint=self._base_url,
            api_key_env=self._key_env,
            model=model,
            timeout_s=settings.timeout_s,
        )

    @property
    def spec(self) -> str:
        return f"openai:{self._model}"

    @property
    def model_name(self) -> str:
        return self._model

    def _get_client(self) -> AsyncOpenAI | None:
        if self._client is None:
            key = api_key(self._key_env, self._base_url)
            if key is None:
                return None
            self._client = AsyncOpenAI(
                base_url=self._base_url,
                api_key=key,
                timeout=self._settings.timeout_s,
                max_retries=self._settings.max_retries,
            )
        return self._client

    async def _open(
        self, client: AsyncOpenAI, request: ModelRequest
    ) -> openai.AsyncStream[ChatCompletionChunk]:
        tools = to_openai_tools(request.tools)
        messages = to_openai_messages(request.messages)
        max_tokens = request.max_tokens if request.max_tokens is not None else omit
        temperature = request.temperature if request.temperature is not None else omit
        if self._stream_options_ok:
            try:
                return await client.chat.completions.create(
                    model=self._model,
                    messages=messages,
                    stream=True,
                    stream_options={"include_usage": True},
                    max_tokens=max_tokens,
                    temperature=temperature,
                    tools=tools or omit,
                )
            except (openai.BadRequestError, openai.UnprocessableEntityError):
                # Some compatible servers reject stream_options; retry once without it.
                self._stream_options_ok = False
        return await client.chat.completions.create(
            model=self._model,
            messages=messages,
            stream=True,
            max_tokens=max_tokens,
            temperature=temperature,
            tools=tools or omit,
        )

    def unusable(self) -> StreamFailed | None:
        if api_key(self._key_env, self._base_url) is None:
            return missing_key(self._key_env, self._base_url)
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        client = self._get_client()
        if client is None:
            yield missing_key(self._key_env, self._base_url)
            return
        try:
            chunks = await self._open(client, request)
        except Exception as exc:
            yield sdk_failure(exc, OPENAI_ERRORS, self._ctx)
            return
        accumulator = ToolCallAccumulator(request.call_index)
        usage: Usage | None = None
        content_chunks = 0
        finished = False
        failure: StreamFailed | None = None
        try:
            async for chunk in chunks:
                if chunk.usage is not None:
                    usage = Usage(
                        prompt_tokens=chunk.usage.prompt_tokens or 0,
                        completion_tokens=chunk.usage.completion_tokens or 0,
                    )
                accumulator.add(chunk)
                for choice in chunk.choices:
                    if choice.delta.content:
                        content_chunks += 1
                        yield TextDelta(choice.delta.content)
                    if choice.finish_reason is not None:
                        finished = True
        except Exception as exc:
            failure = sdk_failure(exc, OPENAI_ERRORS, self._ctx)
        finally:
            await chunks.close()
        if failure is None and not finished:
            failure = StreamFailed(DISCONNECT_REASON, "disconnect")
        if failure is not None:
            yield failure
            return
        for call in accumulator.calls():
            yield ToolCallRequested(call)
        # Servers that ignore stream_options (llama.cpp's among them) send no usage; servers
        # stream about one token per chunk, so the chunk count stands in for completion tokens.
        yield UsageReported(usage or Usage(completion_tokens=content_chunks))

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
