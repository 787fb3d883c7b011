"""Rebuild the exact messages of a past turn from the log alone.

A ``ContextAssembled`` event names every included item by reference: history by event seq,
memories by id and version (bodies come from ``memory_versions``), retrieved passages by chunk
(their text is stored in the event). Replay turns those back into a ``Plan`` and renders it with
the assembler's own code, so the result equals the original request byte for byte.
"""

from __future__ import annotations

import re

from kairox.context.assembler import TOOLS_REF
from kairox.context.history import item_messages
from kairox.context.render import (
    Cut,
    Plan,
    cut_messages,
    cut_text,
    memory_body,
    memory_entry,
    render,
)
from kairox.context.tokens import Tokenizer, TokenizerRegistry
from kairox.core.errors import NotFound, StoreError
from kairox.core.events import ContextAssembled, StoredEvent, TraceItem, UserMessageAdded
from kairox.core.messages import ChatMessage
from kairox.core.types import ContextSource
from kairox.store.protocols import EventStore, MemoryStore

_MEMORY_REF = re.compile(r"^mem:(?P<id>.+)@v(?P<version>\d+)$")
_SEQ_REF = re.compile(r"^seq:(?P<seq>\d+)$")


def load_assembly(
    events: EventStore, session_id: str, turn: int | None = None, *, seq: int | None = None
) -> StoredEvent:
    """The ``ContextAssembled`` event at ``seq``, or the last one of ``turn`` (of the session when
    ``turn`` is None). Raises ``NotFound``."""
    if seq is not None:
        event = events.get(seq)
        if (
            event is None
            or event.session_id != session_id
            or not isinstance(event.payload, ContextAssembled)
        ):
            raise NotFound("context assembly", f"seq:{seq}")
        return event
    found = events.latest(
        session_id, "ContextAssembled", where=("turn", turn) if turn is not None else None
    )
    if found is None:
        what = f"{session_id} turn {turn}" if turn is not None else session_id
        raise NotFound("context assembly", what)
    return found


def replay(
    events: EventStore,
    memories: MemoryStore,
    session_id: str,
    turn: int,
    tokenizers: TokenizerRegistry,
    *,
    assembly_seq: int | None = None,
) -> tuple[ChatMessage, ...]:
    """The messages the assembly of ``turn`` produced (its last assembly, or ``assembly_seq``)."""
    event = load_assembly(events, session_id, turn, seq=assembly_seq)
    assert isinstance(event.payload, ContextAssembled)
    return render(replay_plan(events, memories, event, tokenizers.get(event.payload.tokenizer)))


def replay_plan(
    events: EventStore,
    memories: MemoryStore,
    assembly: StoredEvent,
    tokenizer: Tokenizer,
) -> Plan:
    """The plan of a stored assembly, rebuilt from the references in its trace."""
    trace = assembly.payload
    assert isinstance(trace, ContextAssembled)
    blocks: dict[ContextSource, list[str]] = {
        ContextSource.MEMORY: [],
        ContextSource.WORKSPACE: [],
        ContextSource.KNOWLEDGE_BASE: [],
        ContextSource.RECALL: [],
    }
    summary: list[ChatMessage] = []
    history: list[ChatMessage] = []
    tail: list[ChatMessage] = []  # history items after the prompt: this turn's tool rounds
    prompt: str | None = None
    for item in trace.items:
        if not item.included:
            continue
        match item.source:
            case ContextSource.SYSTEM:
                pass  # the system text is stored whole in the event
            case ContextSource.MEMORY:
                blocks[item.source].append(_memory_line(memories, item, tokenizer))
            case ContextSource.WORKSPACE | ContextSource.KNOWLEDGE_BASE | ContextSource.RECALL:
                if item.ref not in trace.retrieved:
                    raise StoreError(f"assembly seq:{assembly.seq} lacks the text of {item.ref}")
                blocks[item.source].append(trace.retrieved[item.ref])
            case ContextSource.SUMMARY:
                summary.extend(_history_messages(events, item, tokenizer))
            case ContextSource.HISTORY:
                into = history if prompt is None else tail
                into.extend(_history_messages(events, item, tokenizer))
            case ContextSource.PROMPT:
                prompt = _prompt(events, assembly, trace.turn, item.ref)
    if prompt is None:
        raise StoreError(f"assembly seq:{assembly.seq} has no prompt item")
    return Plan(
        system=trace.system_prompt,
        memories=tuple(blocks[ContextSource.MEMORY]),
        workspace=tuple(blocks[ContextSource.WORKSPACE]),
        knowledge_base=tuple(blocks[ContextSource.KNOWLEDGE_BASE]),
        summary=tuple(summary),
        history=tuple(history),
        prompt=prompt,
        tail=tuple(tail),
        recall=tuple(blocks[ContextSource.RECALL]),
    )


def _cut(item: TraceItem) -> Cut | None:
    if not item.truncated:
        return None
    if item.kept_tokens is None or item.dropped_tokens is None:
        raise StoreError(f"trace item {item.ref} is truncated but records no cut")
    return Cut(kept=item.kept_tokens, dropped=item.dropped_tokens)


def _memory_line(memories: MemoryStore, item: TraceItem, tokenizer: Tokenizer) -> str:
    match = _MEMORY_REF.match(item.ref)
    if match is None:
        raise StoreError(f"not a memory reference: {item.ref}")
    memory_id, version = match["id"], int(match["version"])
    record = memories.get(memory_id)
    body = next(
        (
            v.body
            for v in memories.history(memory_id)
            if v.memory_id == memory_id and v.version == version
        ),
        None,
    )
    if body is None:
        raise NotFound("memory version", item.ref)
    text = memory_body(body)
    cut = _cut(item)
    if cut is not None:
        text = cut_text(tokenizer, text, cut)
    return memory_entry(record.scope, record.key, text)


def _history_messages(
    events: EventStore, item: TraceItem, tokenizer: Tokenizer
) -> tuple[ChatMessage, ...]:
    event = events.get(_seq(item.ref))
    made = item_messages(event.payload) if event is not None else None
    if made is None:
        raise NotFound("history event", item.ref)
    messages = made[1]
    cut = _cut(item)
    return cut_messages(tokenizer, messages, cut) if cut is not None else messages


def _prompt(events: EventStore, assembly: StoredEvent, turn: int, ref: str) -> str:
    if _SEQ_REF.match(ref):
        event = events.get(_seq(ref))
    else:  # the prompt event was not known to the assembler: the turn's last one before it
        event = (
            events.latest(
                assembly.session_id, "UserMessageAdded", where=("turn", turn), before=assembly.seq
            )
            if assembly.session_id is not None
            else None
        )
    if event is None or not isinstance(event.payload, UserMessageAdded):
        raise NotFound("prompt of turn", str(turn))
    return event.payload.text


def _seq(ref: str) -> int:
    match = _SEQ_REF.match(ref)
    if match is None:
        raise StoreError(f"not an event reference: {ref}")
    return int(match["seq"])


def item_text(
    events: EventStore,
    memories: MemoryStore,
    assembly: StoredEvent,
    ref: str,
    tokenizer: Tokenizer,
) -> str:
    """The text one trace item of ``assembly`` put into the request (cut as it was cut), so a
    surface can expand a reference such as ``mem:…@v4`` or ``seq:106`` to what the model saw.

    An item that was left out is shown as it would have entered; a left-out retrieval hit has no
    stored text, and says so. Raises ``NotFound`` for a reference the assembly does not hold.
    """
    trace = assembly.payload
    assert isinstance(trace, ContextAssembled)
    item = next((i for i in trace.items if i.ref == ref), None)
    if item is None:
        raise NotFound(f"item of the turn {trace.turn} assembly", ref)
    match item.source:
        case ContextSource.SYSTEM if item.ref == TOOLS_REF:
            return f"the tool definitions sent beside the messages ({item.tokens} tokens)"
        case ContextSource.SYSTEM:
            return trace.system_prompt
        case ContextSource.MEMORY:
            return _memory_line(memories, item, tokenizer)
        case ContextSource.WORKSPACE | ContextSource.KNOWLEDGE_BASE | ContextSource.RECALL:
            if item.ref in trace.retrieved:
                return trace.retrieved[item.ref]
            return f"(the text of {item.ref} is not recorded: it was left out: {item.reason})"
        case ContextSource.HISTORY | ContextSource.SUMMARY:
            messages = _history_messages(events, item, tokenizer)
            return "\n\n".join(_message_text(m) for m in messages)
        case ContextSource.PROMPT:
            return _prompt(events, assembly, trace.turn, item.ref)
    raise StoreError(f"trace item {ref} has an unknown source")  # pragma: no cover


def _message_text(message: ChatMessage) -> str:
    head = message.role if not message.name else f"{message.role} ({message.name})"
    calls = "".join(f"\n[tool call {c.name} {c.arguments}]" for c in message.tool_calls)
    return f"[{head}]\n{message.content}{calls}"
