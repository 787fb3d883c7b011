"""One turn: record the prompt, assemble the context, stream the reply through the marker filter,
run tools, complete the message and route memory proposals.

A failure at any step ends the turn with ``TurnFailed`` and a one-line reason; the user message
stays recorded, and no partial reply is stored as a completed message.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from kairox.context.assembler import TURN_MEMORIES, AssemblyInput, ContextAssembler
from kairox.context.history import HistoryItem, rewound_seqs, tool_item
from kairox.context.history_cache import HistoryCache
from kairox.context.taint import untrusted_in_context
from kairox.context.tokens import Tokenizer
from kairox.core.aio import blocking, shielded
from kairox.core.config import ExtractMode
from kairox.core.errors import ContextOverflow, KairoxError
from kairox.core.events import (
    AssistantMessageCompleted,
    EventPayload,
    MemoryMarkerRejected,
    ModelCallStarted,
    ModelNotice,
    ModelTokenDelta,
    StoredEvent,
    ToolInvocationCompleted,
    TurnFailed,
    UntrustedInput,
    Usage,
    UserMessageAdded,
)
from kairox.core.messages import ChatMessage, ToolCall
from kairox.core.outcomes import TurnOutcome
from kairox.core.records import MemoryView
from kairox.core.repetition import FinishReason
from kairox.core.types import MemoryOrigin
from kairox.memory.markers import MarkerStream, MemoryMarker, ParseResult
from kairox.memory.protocol import reply_grammar
from kairox.memory.service import MemoryPolicy, Proposal, Routed
from kairox.models import (
    ModelProvider,
    ModelRequest,
    Noticed,
    Preloadable,
    ReplyCut,
    StreamFailed,
    TextDelta,
    ToolCallRequested,
    UsageReported,
)
from kairox.retrieval.memory_index import MemoryIndex
from kairox.retrieval.types import RetrievalHit
from kairox.runtime.deltas import DeltaCoalescer, paced
from kairox.runtime.recall import SessionRecall
from kairox.runtime.retrieval import TurnRetriever
from kairox.runtime.tools import TOOL_SPECS, BuiltinTools
from kairox.services import Services

MAX_TOOL_ROUNDS = 4
# Tool calls one model round may run; the rest of that round's calls are dropped, not run and
# not recorded, and the last result says so (300 reads in one round once wrote 39 MB).
MAX_TOOL_CALLS_PER_ROUND = 8


@dataclass(kw_only=True)
class ContextDeps:
    """What assembling a session's context needs: a turn's, or a preview's for the caller's
    own model call (``facade.chat.assemble``)."""

    services: Services
    session_id: str
    workspace_id: str
    profile_alias: str
    instructions: str
    system_prompt: str
    model: str  # the spec the context is assembled for (it names the tokenizer in the trace)
    tokenizer: Tokenizer
    assembler: ContextAssembler
    retriever: TurnRetriever
    history: HistoryCache  # the session's history items, kept across its turns
    recall: SessionRecall | None = None
    memory_index: MemoryIndex | None = None  # ranks memories for the prompt under a tight budget


@dataclass(kw_only=True)
class TurnDeps(ContextDeps):
    provider: ModelProvider
    tools: BuiltinTools
    max_output_tokens: int | None = None
    policy: MemoryPolicy = field(default_factory=MemoryPolicy)
    extract: ExtractMode = "inline"
    """``[memory] extract`` for this turn; the model's notice says what it means for it."""


async def gather(
    d: ContextDeps, text: str, *, turn: int, until_seq: int, prompt_seq: int | None
) -> AssemblyInput:
    """The inputs of an assembly for ``text``: retrieval, the memories in view, the history up
    to ``until_seq`` and what recall finds before it."""
    retrieved = await d.retriever.search(text, profile=d.profile_alias)
    view = MemoryView(workspace_id=d.workspace_id, session_id=d.session_id)
    memories = await blocking(d.services.memories.for_context, view)
    history = await blocking(
        d.history.load, d.tokenizer, until_seq=until_seq, max_tokens=d.assembler.budget.budget
    )
    rewound = await blocking(rewound_seqs, d.services.events, d.session_id, until_seq=until_seq)
    recalled, recall_errors = await _recall(d.recall, text, history, rewound, until_seq + 1)
    # The memory search ranks enough to choose the turn's TURN_MEMORIES, not all in view.
    ranked = min(len(memories), 4 * TURN_MEMORIES)
    relevance, relevance_errors = await _memory_relevance(d, text, ranked)
    return AssemblyInput(
        system_prompt=d.system_prompt,
        instructions=d.instructions,
        memories=memories,
        workspace_hits=retrieved.workspace,
        kb_hits=retrieved.knowledge_base,
        history=history,
        prompt=text,
        turn=turn,
        model=d.model,
        retrieval_errors=(*retrieved.errors, *recall_errors, *relevance_errors),
        retrieval_notes=retrieved.notes,
        prompt_seq=prompt_seq,
        relevance_floor=retrieved.floor,
        recall_hits=recalled,
        memory_relevance=relevance,
    )


async def _recall(
    recall: SessionRecall | None,
    text: str,
    history: list[HistoryItem],
    rewound: set[int],
    before_seq: int,
) -> tuple[list[RetrievalHit], tuple[str, ...]]:
    """Events matching the prompt that the loaded history window does not already hold (and
    that no rewind took out of the session)."""
    if recall is None:
        return [], ()
    window = {seq for item in history for seq in item.seqs} | rewound
    try:
        hits = await recall.for_turn(text, exclude=window, before_seq=before_seq)
    except KairoxError as exc:
        return [], (f"recall: {exc}",)
    return hits, ()


async def _memory_relevance(
    d: ContextDeps, text: str, count: int
) -> tuple[dict[str, float], tuple[str, ...]]:
    """The memory search's score of each memory for the prompt (for the assembler's choice
    when memories alone exceed the budget)."""
    index = d.memory_index
    if index is None or count == 0 or not text.strip():
        return {}, ()
    try:
        ranked = await blocking(index.search, text, workspace_id=d.workspace_id, k=count + 10)
    except KairoxError as exc:
        return {}, (f"memory search: {exc}",)
    return {hit.memory_id: hit.score for hit in ranked}, ()


class Turn:
    def __init__(self, deps: TurnDeps) -> None:
        self.d = deps
        self.current_turn: int | None = None
        self.completed = False  # the reply or the failure is recorded
        self.untrusted: list[UntrustedInput] = []  # in the context of any of its model calls

    async def _append(self, payload: EventPayload) -> StoredEvent:
        event = await shielded(
            self.d.services.events.append,
            payload,
            session_id=self.d.session_id,
            workspace_id=self.d.workspace_id,
            counter=self.d.tokenizer,
        )
        return event

    async def fail(
        self,
        turn: int,
        reason: str,
        markers: list[MemoryMarker] | None = None,
        provenance: list[tuple[UntrustedInput, ...]] | None = None,
        *,
        refused: bool = False,
    ) -> TurnOutcome:
        """End the turn with ``TurnFailed``; proposals parsed before the failure are routed, each
        with the untrusted inputs of its call. ``refused`` marks a prompt that did not fit and
        was never sent."""
        self.completed = True  # the failure is recorded: a later cancel adds nothing
        routed = await self._route(turn, markers or [], provenance or [])
        await self._append(TurnFailed(turn=turn, reason=reason, refused=refused))
        return TurnOutcome(
            turn=turn,
            proposals=[r.record for r in routed if not r.duplicate],
            duplicates=[r.record for r in routed if r.duplicate],
            failure=reason,
        )

    async def run(self, text: str) -> TurnOutcome:
        """Run the turn; any exception after the prompt is recorded ends it with ``TurnFailed``."""
        try:
            return await self._run(text)
        except Exception as exc:
            turn = getattr(self, "current_turn", None)
            if turn is None:
                raise
            return await self.fail(turn, one_line_reason(exc))

    async def _run(self, text: str) -> TurnOutcome:
        events = self.d.services.events
        turn = (
            await blocking(events.count, session_id=self.d.session_id, types=["UserMessageAdded"])
            + 1
        )
        user_event = await self._append(UserMessageAdded(turn=turn, text=text))
        self.current_turn = turn
        base = await gather(
            self.d, text, turn=turn, until_seq=user_event.seq - 1, prompt_seq=user_event.seq
        )
        tail: list[HistoryItem] = []  # this turn's tool rounds, counted before every call
        # Every untrusted item in the context of a call taints what that call proposes.
        provenance: list[tuple[UntrustedInput, ...]] = []
        tool_results: list[UntrustedInput] = []  # this turn's, tainting every later call
        reply_parts: list[str] = []
        markers: list[MemoryMarker] = []
        usage = Usage()
        for _round in range(MAX_TOOL_ROUNDS + 1):
            try:
                assembly = self.d.assembler.assemble(replace(base, tail=tuple(tail)))
            except ContextOverflow as exc:
                return await self.fail(turn, str(exc), markers, provenance, refused=not tail)
            await self._append(assembly.trace)
            untrusted = untrusted_in_context(assembly.trace.items)
            untrusted += [u for u in tool_results if u not in untrusted]
            self.untrusted += [u for u in untrusted if u not in self.untrusted]
            proposed = len(markers)
            # The reply gets what the window leaves after the prompt and the tool definitions,
            # at most the profile's max_output_tokens: the whole request fits the window.
            room = assembly.trace.window - assembly.trace.used
            step = await self._call_model(
                turn, list(assembly.messages), reply_parts, markers, max_tokens=room
            )
            provenance.extend([tuple(untrusted)] * (len(markers) - proposed))
            if step.failure is not None:
                return await self.fail(turn, step.failure, markers, provenance)
            usage = Usage(
                prompt_tokens=usage.prompt_tokens + step.usage.prompt_tokens,
                completion_tokens=usage.completion_tokens + step.usage.completion_tokens,
            )
            if not step.tool_calls:
                break
            calls = step.tool_calls[:MAX_TOOL_CALLS_PER_ROUND]
            dropped = len(step.tool_calls) - len(calls)
            for index, call in enumerate(calls, 1):
                result = await self.d.tools.run(call.name, call.arguments)
                text = result.text
                if dropped and index == len(calls):
                    text += (
                        f"\n[{dropped} more tool calls of this round were not run: at most "
                        f"{MAX_TOOL_CALLS_PER_ROUND} per round]"
                    )
                payload = ToolInvocationCompleted(
                    turn=turn,
                    call_id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                    result=text,
                    is_error=result.is_error,
                )
                event = await self._append(payload)
                tool_results.append(UntrustedInput(kind="tool_result", ref=f"seq:{event.seq}"))
                tail.append(tool_item(event.seq, event.ts, payload, self.d.tokenizer))
        else:
            return await self.fail(
                turn,
                f"the model asked for more than {MAX_TOOL_ROUNDS} rounds of tool calls",
                markers,
                provenance,
            )
        reply = "".join(reply_parts)
        await self._append(
            AssistantMessageCompleted(
                turn=turn,
                text=reply,
                model=self.d.provider.model_name,
                usage=usage,
                finish_reason=step.finish_reason,
            )
        )
        self.completed = True
        routed = await self._route(turn, markers, provenance)
        return TurnOutcome(
            turn=turn,
            reply=reply,
            proposals=[r.record for r in routed if not r.duplicate],
            duplicates=[r.record for r in routed if r.duplicate],
            usage=usage,
            finish_reason=step.finish_reason,
        )

    async def _route(
        self,
        turn: int,
        markers: list[MemoryMarker],
        provenance: list[tuple[UntrustedInput, ...]],
    ) -> list[Routed]:
        """Route the turn's proposals; the store publishes their events like every other."""
        if not markers:
            return []
        return await shielded(
            self.d.services.approval.route,
            [
                Proposal(
                    scope=m.scope,
                    key=m.key,
                    body=m.body,
                    untrusted=taint,
                    origin=MemoryOrigin.REPLY,
                )
                for m, taint in zip(markers, provenance, strict=True)
            ],
            workspace_id=self.d.workspace_id,
            session_id=self.d.session_id,
            turn=turn,
            policy=self.d.policy,
        )

    async def _call_model(
        self,
        turn: int,
        messages: list[ChatMessage],
        reply_parts: list[str],
        markers: list[MemoryMarker],
        *,
        max_tokens: int,
    ) -> _Step:
        events = self.d.services.events
        call_index = await blocking(
            events.count,
            session_id=self.d.session_id,
            types=["ModelCallStarted"],
            where_json=("purpose", "reply"),
        )
        provider = self.d.provider
        await self._notice_once(turn, provider)
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
            max_tokens=min(max_tokens, self.d.max_output_tokens or max_tokens),
            grammar=reply_grammar(self.d.system_prompt),
        )
        stream = MarkerStream()
        step = _Step()
        pending = DeltaCoalescer(self.d.services.clock.now)

        async def write(text: str | None) -> None:
            if text:
                await self._append(ModelTokenDelta(turn=turn, text=text))

        items = paced(self.d.provider.stream(request), pending.due)
        async with contextlib.aclosing(items):  # its reader task ends with the loop
            async for item in items:
                match item:
                    case None:  # the stream stalled with text waiting: show it
                        await write(pending.flush())
                    case TextDelta(text=delta):
                        parsed = stream.feed(no_nul(delta))
                        if parsed.rejected:  # the text before a rejected marker is logged first
                            await write(pending.flush())
                        await self._take_markers(turn, parsed, markers)
                        if parsed.visible:
                            step.text += parsed.visible
                            reply_parts.append(parsed.visible)
                            await write(pending.feed(parsed.visible))
                    case ToolCallRequested(call=call):
                        step.tool_calls.append(
                            call.model_copy(
                                update={
                                    "name": no_nul(call.name),
                                    "arguments": no_nul(call.arguments),
                                }
                            )
                        )
                    case UsageReported(usage=usage):
                        step.usage = usage
                    case ReplyCut(reason=reason):
                        step.finish_reason = reason
                    case StreamFailed(reason=reason):
                        step.failure = no_nul(reason)
                        await write(pending.flush())
                        await self._take_markers(turn, stream.close(), markers)
                        return step
        tail = stream.close()
        if tail.rejected:
            await write(pending.flush())
        await self._take_markers(turn, tail, markers)
        if tail.visible:
            step.text += tail.visible
            reply_parts.append(tail.visible)
        await write(pending.feed(tail.visible) or pending.flush())
        return step

    async def _notice_once(self, turn: int, provider: ModelProvider) -> None:
        """The provider's notice (the demo model's limits under the extract mode that is on),
        once per session; a change of mode that changes the notice says the new one once."""
        notice = provider.notice_for(self.d.extract) if isinstance(provider, Noticed) else None
        if notice is None:
            return
        shown = await blocking(
            self.d.services.events.count,
            session_id=self.d.session_id,
            types=["ModelNotice"],
            where_json=("text", notice),
        )
        if not shown:
            await self._append(ModelNotice(turn=turn, model=provider.spec, text=notice))

    async def _take_markers(
        self, turn: int, parsed: ParseResult, markers: list[MemoryMarker]
    ) -> None:
        """Keep the valid markers for routing; record every rejected one as it is found."""
        markers.extend(parsed.markers)
        for rejected in parsed.rejected:
            await self._append(
                MemoryMarkerRejected(turn=turn, reason=rejected.reason, raw=rejected.raw)
            )


def model_label(provider: ModelProvider) -> str:
    """The model as the trace names it: its spec, and for a local model the file it runs."""
    path = getattr(provider, "model_path", None)
    return f"{provider.spec} ({path.name})" if isinstance(path, Path) else provider.spec


def no_nul(text: str) -> str:
    """Model output with NUL replaced (U+FFFD) before anything is written: Postgres refuses NUL
    in text, SQLite would keep it, and a C reader stops at it. Both stores get the same text."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def one_line_reason(exc: BaseException, *, limit: int = 300) -> str:
    """What a user sees of an unexpected failure: one line, never a traceback."""
    if isinstance(exc, KairoxError):
        text = str(exc)
    else:
        text = f"internal error in the turn ({type(exc).__name__}: {exc})"
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass
class _Step:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    failure: str | None = None
    finish_reason: FinishReason = "stop"
