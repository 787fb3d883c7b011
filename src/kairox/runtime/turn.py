"""One turn: record the prompt, assemble the context, stream the reply through the marker filter,
run tools, complete the message and route memory proposals.

A failure at any step ends the turn with ``TurnFailed`` and a one-line reason; the user message
stays recorded, and no partial reply is stored as a completed message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kairox.context.assembler import AssemblyInput, ContextAssembler
from kairox.context.history import load_history
from kairox.context.tokens import Tokenizer
from kairox.core.aio import blocking, shielded
from kairox.core.errors import ContextOverflow
from kairox.core.events import (
    AssistantMessageCompleted,
    EventPayload,
    MemoryMarkerRejected,
    ModelCallStarted,
    ModelTokenDelta,
    StoredEvent,
    ToolInvocationCompleted,
    TurnFailed,
    UntrustedInput,
    Usage,
    UserMessageAdded,
)
from kairox.core.messages import ChatMessage, ToolCall
from kairox.core.records import MemoryRecord, MemoryView
from kairox.memory.markers import MarkerStream, MemoryMarker, ParseResult
from kairox.memory.service import Proposal
from kairox.runtime.models import (
    ModelProvider,
    ModelRequest,
    Preloadable,
    StreamFailed,
    TextDelta,
    ToolCallRequested,
    UsageReported,
)
from kairox.runtime.prompts import build_system_prompt
from kairox.runtime.retrieval import TurnRetriever
from kairox.runtime.services import Services
from kairox.runtime.tools import TOOL_SPECS, BuiltinTools

MAX_TOOL_ROUNDS = 4
Sink = Callable[[StoredEvent], None]


@dataclass
class TurnDeps:
    services: Services
    session_id: str
    workspace_id: str
    profile_alias: str
    instructions: str
    provider: ModelProvider
    tokenizer: Tokenizer
    assembler: ContextAssembler
    retriever: TurnRetriever
    tools: BuiltinTools
    max_output_tokens: int | None = None
    sink: Sink = lambda _event: None


@dataclass
class TurnOutcome:
    turn: int
    reply: str = ""
    proposals: list[MemoryRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    failure: str | None = None


class Turn:
    def __init__(self, deps: TurnDeps) -> None:
        self.d = deps

    async def _append(self, payload: EventPayload) -> StoredEvent:
        event = await shielded(
            self.d.services.events.append,
            payload,
            session_id=self.d.session_id,
            workspace_id=self.d.workspace_id,
            counter=self.d.tokenizer,
        )
        self.d.sink(event)
        return event

    async def fail(
        self,
        turn: int,
        reason: str,
        markers: list[MemoryMarker] | None = None,
        untrusted: list[UntrustedInput] | None = None,
    ) -> TurnOutcome:
        """End the turn with ``TurnFailed``; proposals parsed before the failure are routed."""
        proposals = await self._route(turn, markers or [], untrusted or [])
        await self._append(TurnFailed(turn=turn, reason=reason))
        return TurnOutcome(turn=turn, proposals=proposals, failure=reason)

    def _small_model(self) -> bool:
        """The embedded ``local`` backend runs small models: they get the short prompt."""
        spec = self.d.provider.spec.strip()
        return spec == "local" or spec.startswith("local:")

    async def run(self, text: str) -> TurnOutcome:
        events = self.d.services.events
        turn = (
            await blocking(events.count, session_id=self.d.session_id, types=["UserMessageAdded"])
            + 1
        )
        user_event = await self._append(UserMessageAdded(turn=turn, text=text))
        self.current_turn = turn
        retrieved = await self.d.retriever.search(text, profile=self.d.profile_alias)
        untrusted = [
            UntrustedInput(
                kind="workspace_chunk"
                if h.source.startswith("workspace:")
                else "knowledge_base_hit",
                ref=f"{h.source}#{h.chunk_id}",
            )
            for h in (*retrieved.workspace, *retrieved.knowledge_base)
        ]
        view = MemoryView(workspace_id=self.d.workspace_id, session_id=self.d.session_id)
        memories = await blocking(self.d.services.memories.for_context, view)
        history = await blocking(
            load_history,
            events,
            self.d.session_id,
            self.d.tokenizer,
            until_seq=user_event.seq - 1,
            max_tokens=self.d.assembler.budget.budget,
        )
        try:
            assembly = self.d.assembler.assemble(
                AssemblyInput(
                    system_prompt=build_system_prompt("", short=self._small_model()),
                    instructions=self.d.instructions,
                    memories=memories,
                    workspace_hits=retrieved.workspace,
                    kb_hits=retrieved.knowledge_base,
                    history=history,
                    prompt=text,
                    turn=turn,
                    model=self.d.provider.spec,
                    retrieval_errors=retrieved.errors,
                    prompt_seq=user_event.seq,
                )
            )
        except ContextOverflow as exc:
            return await self.fail(turn, str(exc))
        await self._append(assembly.trace)
        messages = list(assembly.messages)
        reply_parts: list[str] = []
        markers: list[MemoryMarker] = []
        usage = Usage()
        for _round in range(MAX_TOOL_ROUNDS + 1):
            step = await self._call_model(turn, messages, reply_parts, markers)
            if step.failure is not None:
                return await self.fail(turn, step.failure, markers, untrusted)
            usage = Usage(
                prompt_tokens=usage.prompt_tokens + step.usage.prompt_tokens,
                completion_tokens=usage.completion_tokens + step.usage.completion_tokens,
            )
            if not step.tool_calls:
                break
            messages.append(
                ChatMessage(role="assistant", content=step.text, tool_calls=tuple(step.tool_calls))
            )
            for call in step.tool_calls:
                result = await self.d.tools.run(call.name, call.arguments)
                event = await self._append(
                    ToolInvocationCompleted(
                        turn=turn,
                        call_id=call.id,
                        name=call.name,
                        arguments=call.arguments,
                        result=result.text,
                        is_error=result.is_error,
                    )
                )
                untrusted.append(UntrustedInput(kind="tool_result", ref=f"seq:{event.seq}"))
                messages.append(
                    ChatMessage(
                        role="tool", content=result.text, tool_call_id=call.id, name=call.name
                    )
                )
        else:
            return await self.fail(
                turn,
                f"the model asked for more than {MAX_TOOL_ROUNDS} rounds of tool calls",
                markers,
                untrusted,
            )
        reply = "".join(reply_parts)
        await self._append(
            AssistantMessageCompleted(
                turn=turn, text=reply, model=self.d.provider.model_name, usage=usage
            )
        )
        proposals = await self._route(turn, markers, untrusted)
        return TurnOutcome(turn=turn, reply=reply, proposals=proposals, usage=usage)

    async def _route(
        self, turn: int, markers: list[MemoryMarker], untrusted: list[UntrustedInput]
    ) -> list[MemoryRecord]:
        """Route the turn's proposals; their memory events reach the sink like every other."""
        if not markers:
            return []
        before = await blocking(self.d.services.events.last_seq)
        proposals = await shielded(
            self.d.services.approval.route,
            [Proposal(scope=m.scope, key=m.key, body=m.body) for m in markers],
            workspace_id=self.d.workspace_id,
            session_id=self.d.session_id,
            turn=turn,
            untrusted_inputs=untrusted,
        )
        written = await blocking(
            self.d.services.events.read, after=before, session_id=self.d.session_id
        )
        for event in written:
            if event.type.startswith("Memory"):
                self.d.sink(event)
        return proposals

    async def _call_model(
        self,
        turn: int,
        messages: list[ChatMessage],
        reply_parts: list[str],
        markers: list[MemoryMarker],
    ) -> _Step:
        events = self.d.services.events
        call_index = await blocking(
            events.count,
            session_id=self.d.session_id,
            types=["ModelCallStarted"],
            where_json=("purpose", "reply"),
        )
        provider = self.d.provider
        loading = isinstance(provider, Preloadable) and not provider.loaded
        await self._append(
            ModelCallStarted(
                turn=turn,
                purpose="reply",
                model=provider.spec,
                call_index=call_index,
                loading=loading,
            )
        )
        request = ModelRequest(
            messages=tuple(messages),
            session_id=self.d.session_id,
            call_index=call_index,
            tools=TOOL_SPECS,
            max_tokens=self.d.max_output_tokens,
        )
        stream = MarkerStream()
        step = _Step()
        async for item in self.d.provider.stream(request):
            match item:
                case TextDelta(text=delta):
                    parsed = stream.feed(delta)
                    await self._take_markers(turn, parsed, markers)
                    if parsed.visible:
                        step.text += parsed.visible
                        reply_parts.append(parsed.visible)
                        await self._append(ModelTokenDelta(turn=turn, text=parsed.visible))
                case ToolCallRequested(call=call):
                    step.tool_calls.append(call)
                case UsageReported(usage=usage):
                    step.usage = usage
                case StreamFailed(reason=reason):
                    step.failure = reason
                    await self._take_markers(turn, stream.close(), markers)
                    return step
        tail = stream.close()
        await self._take_markers(turn, tail, markers)
        if tail.visible:
            step.text += tail.visible
            reply_parts.append(tail.visible)
            await self._append(ModelTokenDelta(turn=turn, text=tail.visible))
        return step

    async def _take_markers(
        self, turn: int, parsed: ParseResult, markers: list[MemoryMarker]
    ) -> None:
        """Keep the valid markers for routing; record every rejected one as it is found."""
        markers.extend(parsed.markers)
        for rejected in parsed.rejected:
            await self._append(
                MemoryMarkerRejected(turn=turn, reason=rejected.reason, raw=rejected.raw)
            )


@dataclass
class _Step:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    failure: str | None = None
