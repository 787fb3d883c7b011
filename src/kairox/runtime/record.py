"""Record an exchange that ran outside Kairox (an agent framework called the model) in a
session's log, as a turn would have, and rewind a session's history.

The user messages, tool results and replies become the same events a turn appends; ``<memory>``
markers in a reply become proposals through the same approval policy, tainted by the tool results
recorded with them and by the untrusted items of the context the caller sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from kairox.context.history import rewound_seqs
from kairox.core.aio import blocking, shielded
from kairox.core.errors import InvalidInput
from kairox.core.events import (
    AgentItemRecorded,
    AssistantMessageCompleted,
    EventPayload,
    HistoryRewound,
    MemoryMarkerRejected,
    StoredEvent,
    ToolInvocationCompleted,
    UntrustedInput,
    UserMessageAdded,
)
from kairox.core.messages import AgentItem, ChatMessage, RecordedItem, ToolCall
from kairox.core.outcomes import TurnOutcome
from kairox.memory.markers import MemoryMarker, parse_memory_markers
from kairox.memory.service import MemoryPolicy, Proposal
from kairox.runtime.setup import CommandSetup
from kairox.services import Services
from kairox.store.protocols import EventStore


class Recorder:
    """Appends one batch of messages to a session, on the session's actor."""

    def __init__(self, services: Services, setup: CommandSetup, *, model: str) -> None:
        self._s = services
        self._setup = setup
        self._model = model

    async def _append(self, payload: EventPayload) -> StoredEvent:
        session = self._setup.session
        return await shielded(
            self._s.events.append,
            payload,
            session_id=session.id,
            workspace_id=session.workspace_id,
            counter=self._setup.tokenizer,
        )

    async def record(
        self, messages: Sequence[ChatMessage | AgentItem], untrusted: Sequence[UntrustedInput]
    ) -> TurnOutcome:
        events = self._s.events
        session = self._setup.session
        turn = await blocking(events.count, session_id=session.id, types=["UserMessageAdded"])
        calls: dict[str, ToolCall] = {}
        # the current turn's tool results (an earlier batch) taint its replies, as in a turn
        taint = [*untrusted, *await blocking(self._turn_tool_results)]
        replies: list[str] = []
        proposals: list[Proposal] = []
        for entry in messages:
            item = entry.item if isinstance(entry, AgentItem) else None
            message = entry.message if isinstance(entry, AgentItem) else entry
            if (
                message is None
                or message.role == "system"
                or (item is not None and message.role == "assistant" and message.tool_calls)
            ):
                # no conversation message of its own: kept verbatim only (a function call waits
                # for its result, which records the pair)
                if message is not None:
                    calls.update((call.id, call) for call in message.tool_calls)
                if isinstance(entry, AgentItem):
                    text = message.content if message is not None else ""
                    await self._append(
                        AgentItemRecorded(
                            turn=max(turn, 1), kind=entry.kind, item=entry.item, text=text
                        )
                    )
            elif message.role == "user":
                turn += 1
                await self._append(
                    UserMessageAdded(turn=turn, text=message.content, recorded=True, item=item)
                )
            elif message.role == "tool":
                call = calls.pop(message.tool_call_id or "", None)
                event = await self._append(
                    ToolInvocationCompleted(
                        turn=max(turn, 1),
                        call_id=message.tool_call_id or "",
                        name=call.name if call is not None else message.name or "tool",
                        arguments=call.arguments if call is not None else "{}",
                        result=message.content,
                        is_error=False,
                        item=item,
                    )
                )
                taint.append(UntrustedInput(kind="tool_result", ref=f"seq:{event.seq}"))
            elif message.role == "assistant":
                calls.update((call.id, call) for call in message.tool_calls)
                if message.content or item is not None:
                    markers = await self._reply(max(turn, 1), message.content, replies, item)
                    proposals.extend(
                        Proposal(m.scope, m.key, m.body, untrusted=tuple(taint)) for m in markers
                    )
        routed = await shielded(
            self._s.approval.route,
            proposals,
            workspace_id=session.workspace_id,
            session_id=session.id,
            turn=max(turn, 1),
            policy=MemoryPolicy.from_config(self._setup.config.memory),
        )
        return TurnOutcome(
            turn=max(turn, 1),
            reply="\n".join(replies),
            proposals=[r.record for r in routed if not r.duplicate],
            duplicates=[r.record for r in routed if r.duplicate],
        )

    def _turn_tool_results(self) -> list[UntrustedInput]:
        events, session_id = self._s.events, self._setup.session.id
        prompt = events.latest(session_id, "UserMessageAdded")
        if prompt is None:
            return []
        results = events.read(
            session_id=session_id, types=["ToolInvocationCompleted"], after=prompt.seq
        )
        return [UntrustedInput(kind="tool_result", ref=f"seq:{e.seq}") for e in results]

    async def _reply(
        self, turn: int, text: str, replies: list[str], item: str | None = None
    ) -> list[MemoryMarker]:
        parsed = parse_memory_markers(text)
        for rejected in parsed.rejected:
            await self._append(
                MemoryMarkerRejected(turn=turn, reason=rejected.reason, raw=rejected.raw)
            )
        await self._append(
            AssistantMessageCompleted(turn=turn, text=parsed.visible, model=self._model, item=item)
        )
        replies.append(parsed.visible)
        return parsed.markers

    async def rewind(self, from_seq: int, to_seq: int, reason: str) -> StoredEvent:
        """Take events ``from_seq``..``to_seq`` out of the session's history (not the log)."""
        if from_seq > to_seq:
            raise InvalidInput(f"nothing to rewind: from_seq {from_seq} is past to_seq {to_seq}")
        return await self._append(HistoryRewound(from_seq=from_seq, to_seq=to_seq, reason=reason))


_ITEM_EVENTS = (
    "UserMessageAdded",
    "AssistantMessageCompleted",
    "ToolInvocationCompleted",
    "AgentItemRecorded",
)


def recorded_items(events: EventStore, session_id: str) -> list[RecordedItem]:
    """The items an agent framework recorded in the session, verbatim and oldest first, without
    those a ``HistoryRewound`` took out."""
    gone = rewound_seqs(events, session_id, until_seq=None)
    out: list[RecordedItem] = []
    for event in events.read(session_id=session_id, types=_ITEM_EVENTS):
        item = getattr(event.payload, "item", None)
        if isinstance(item, str) and event.seq not in gone:
            out.append(RecordedItem(seq=event.seq, item=item))
    return out
