"""Typed events: frozen payload classes in one discriminated union on ``type``.

The ``type`` column of the event log is derived from the payload class, and parsing an unknown
type fails. Events that carry message text say so through ``message_text()`` so the store can
count their tokens once, at append time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from kairox.core.repetition import FinishReason, trim_repetition
from kairox.core.types import Actor, ContextSource, MemoryOrigin, MemoryScope

SCHEMA_VERSION = 1


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def message_text(self) -> str | None:
        """The text this event contributes to the conversation, if any."""
        return None


class SessionStarted(_Payload):
    type: Literal["SessionStarted"] = "SessionStarted"
    name: str
    workspace_path: str
    profile: str


class UserMessageAdded(_Payload):
    type: Literal["UserMessageAdded"] = "UserMessageAdded"
    turn: int
    text: str
    # True when the exchange ran outside Kairox (an agent framework called its own model and
    # recorded it through ``facade.chat.record``): its turn stays open between calls by design,
    # so it is never closed as interrupted.
    recorded: bool = False
    item: str | None = None
    """The agent framework's own item, as JSON, when it recorded this message (it round-trips
    exactly: ``facade.chat.items``)."""

    def message_text(self) -> str | None:
        return self.text


class ModelTokenDelta(_Payload):
    """A visible piece of the streamed reply; memory markers are already removed."""

    type: Literal["ModelTokenDelta"] = "ModelTokenDelta"
    turn: int
    text: str


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    prompt_tokens: int = 0
    completion_tokens: int = 0


class AssistantMessageCompleted(_Payload):
    """A reply. ``finish_reason`` says when it did not end on its own (``length``: the reply cap;
    ``loop``: stopped repeating itself); such a reply stays whole in the log but enters later
    prompts only up to its first repetition (``message_text``)."""

    type: Literal["AssistantMessageCompleted"] = "AssistantMessageCompleted"
    turn: int
    text: str
    model: str
    usage: Usage = Usage()
    finish_reason: FinishReason = "stop"
    item: str | None = None
    """The agent framework's own item, as JSON, when it recorded this reply."""

    def message_text(self) -> str | None:
        return self.text if self.finish_reason == "stop" else trim_repetition(self.text)


class ModelCallStarted(_Payload):
    """A call to a model; ``call_index`` counts earlier calls of the same purpose in the session."""

    type: Literal["ModelCallStarted"] = "ModelCallStarted"
    turn: int
    purpose: Literal["reply", "summary", "extraction"]
    model: str
    call_index: int
    # The model is not loaded yet (an embedded model's first call): the first token waits for it.
    loading: bool = False


class ToolInvocationCompleted(_Payload):
    """A tool call and its result, kept as one event so they can never be split."""

    type: Literal["ToolInvocationCompleted"] = "ToolInvocationCompleted"
    turn: int
    call_id: str
    name: str
    arguments: str
    result: str
    is_error: bool = False
    item: str | None = None
    """The agent framework's own ``function_call_output`` item, as JSON, when it recorded
    this result."""

    def message_text(self) -> str | None:
        return f"{self.name}({self.arguments})\n{self.result}"


class AgentItemRecorded(_Payload):
    """An item an agent framework's session stored that is not a message of the conversation
    (its ``function_call`` before the result, a ``system`` or ``developer`` message, reasoning,
    a hosted tool call, ...), kept verbatim so the session returns it exactly. It never enters
    a Kairox context; ``text`` is what a reader of the log sees of it."""

    type: Literal["AgentItemRecorded"] = "AgentItemRecorded"
    turn: int
    kind: str
    item: str
    text: str = ""


UntrustedKind = Literal[
    "tool_result",
    "workspace_chunk",
    "knowledge_base_hit",
    "recalled_event",
    # Text that carries untrusted text on: a summary of a range that held some, and a session
    # memory accepted with its taint. Each is listed with the items it inherits.
    "compaction_summary",
    "tainted_memory",
]


class UntrustedInput(BaseModel):
    """A piece of untrusted text that was in context when a memory was proposed."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: UntrustedKind
    ref: str

    def describe(self) -> str:
        return f"{self.kind.replace('_', ' ')} {self.ref}"


class MemoryProposed(_Payload):
    type: Literal["MemoryProposed"] = "MemoryProposed"
    memory_id: str
    scope: MemoryScope
    key: str | None
    body: str
    turn: int | None = None
    replaces_body: str | None = None
    untrusted_inputs: tuple[UntrustedInput, ...] = ()
    forget: bool = False
    """A proposal to delete the key's memory (``body`` is the memory's): approving deletes it."""
    origin: MemoryOrigin | None = None  # None: recorded before origins were


class MemoryAccepted(_Payload):
    type: Literal["MemoryAccepted"] = "MemoryAccepted"
    memory_id: str
    scope: MemoryScope
    key: str | None
    body: str
    version: int
    decided_by: Actor
    replaced_memory_id: str | None = None


class MemoryRejected(_Payload):
    type: Literal["MemoryRejected"] = "MemoryRejected"
    memory_id: str
    scope: MemoryScope
    key: str | None
    reason: str
    decided_by: Actor


class MemoryEdited(_Payload):
    """``untrusted_inputs``: taint the edit added (an agent's change to a pending proposal made
    after untrusted input); the memory carries it from then on."""

    type: Literal["MemoryEdited"] = "MemoryEdited"
    memory_id: str
    body: str
    previous_body: str
    version: int
    decided_by: Actor
    undo: bool = False
    untrusted_inputs: tuple[UntrustedInput, ...] = ()


class MemoryDeleted(_Payload):
    type: Literal["MemoryDeleted"] = "MemoryDeleted"
    memory_id: str
    version: int
    decided_by: Actor
    proposal_id: str | None = None
    """The approved forget proposal that deleted it (it now resolves to this memory)."""


class MemoryRestored(_Payload):
    """An undone delete: the memory is back with the status it had."""

    type: Literal["MemoryRestored"] = "MemoryRestored"
    memory_id: str
    version: int
    decided_by: Actor


class ModelNotice(_Payload):
    """Something every surface tells the user once per session about the model in use (the
    embedded demo model that does not propose memories, and how to use a better one)."""

    type: Literal["ModelNotice"] = "ModelNotice"
    turn: int
    model: str
    text: str


class MemoryExtractionFailed(_Payload):
    """The extraction call after a turn (``[memory] extract = "after_turn"``) failed; the turn
    itself stands."""

    type: Literal["MemoryExtractionFailed"] = "MemoryExtractionFailed"
    turn: int
    reason: str


class MemoryMarkerRejected(_Payload):
    """A ``<memory>`` marker in a reply that is not a proposal: why, and the marker's text.

    Unclosed markers record only their opening in ``raw``; the text after it stayed visible.
    """

    type: Literal["MemoryMarkerRejected"] = "MemoryMarkerRejected"
    turn: int
    reason: str
    raw: str


class TraceItem(BaseModel):
    """One candidate of an assembly, by reference, with what happened to it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    source: ContextSource
    ref: str
    tokens: int
    included: bool
    reason: str | None = None
    truncated: bool = False
    source_name: str | None = None
    # A truncated item keeps ``tokenizer.truncate(text, kept_tokens)`` and a marker naming
    # ``dropped_tokens``: replay cuts at the same place.
    kept_tokens: int | None = None
    dropped_tokens: int | None = None
    # The untrusted text this item carries on (a summary of a tainted range, a tainted memory).
    untrusted_inputs: tuple[UntrustedInput, ...] = ()

    @property
    def label(self) -> str:
        """The item as a person names it: a keyed memory by ``scope:key`` (``user:editor.font``),
        any other item by its reference."""
        if self.source is ContextSource.MEMORY and self.source_name and ":" in self.source_name:
            return self.source_name
        return self.ref


class ContextAssembled(_Payload):
    type: Literal["ContextAssembled"] = "ContextAssembled"
    turn: int
    model: str
    tokenizer: str
    estimated: bool
    window: int
    headroom: int
    budget: int
    used: int
    by_source: dict[ContextSource, int]
    items: tuple[TraceItem, ...]
    system_prompt: str
    retrieval_errors: tuple[str, ...] = ()
    # What retrieval did before the turn (the workspace index was empty or refreshed).
    retrieval_notes: tuple[str, ...] = ()
    # What replay needs beyond the log: texts of retrieval hits, which are not events.
    retrieved: dict[str, str] = Field(default_factory=dict)
    # The retrieval hits' score floor ([retrieval] min_score); hits under it are traced, left out.
    relevance_floor: float = 0.0


class ContextCompactionStarted(_Payload):
    type: Literal["ContextCompactionStarted"] = "ContextCompactionStarted"
    trigger: Literal["auto", "manual"]


class CompactionSummary(_Payload):
    type: Literal["CompactionSummary"] = "CompactionSummary"
    from_seq: int
    to_seq: int
    text: str
    model: str
    tokens_before: int
    tokens_after: int
    fallback: bool = False
    # Why the deterministic fallback replaced a model summary: the summary could not be used
    # and the next turn would not have fit without compaction.
    fallback_reason: str | None = None
    previous_summary_seq: int | None = None
    # Where the newly summarised events start (from_seq..layer_from_seq-1 came in through the
    # previous summary), and the open tasks the summary was told to keep.
    layer_from_seq: int | None = None
    open_tasks: tuple[str, ...] = ()
    # Everything untrusted in the summarised range (tool results, and what was in the context of
    # its turns, the previous summary's taint included): the summary carries it on.
    untrusted_inputs: tuple[UntrustedInput, ...] = ()

    def message_text(self) -> str | None:
        return self.text


class ContextCompactionCompleted(_Payload):
    type: Literal["ContextCompactionCompleted"] = "ContextCompactionCompleted"
    summary_seq: int


class ContextCompactionFailed(_Payload):
    type: Literal["ContextCompactionFailed"] = "ContextCompactionFailed"
    reason: str


class ContextCompactionSkipped(_Payload):
    type: Literal["ContextCompactionSkipped"] = "ContextCompactionSkipped"
    reason: str


class ProfileSwitched(_Payload):
    type: Literal["ProfileSwitched"] = "ProfileSwitched"
    from_profile: str
    to_profile: str


class SessionArchived(_Payload):
    """The session leaves the default list and refuses new turns; its session memories are
    discarded (a ``MemoryDeleted`` each) and its history stays in the log."""

    type: Literal["SessionArchived"] = "SessionArchived"
    name: str
    discarded: tuple[str, ...] = ()  # the memory ids discarded with it


class SessionUnarchived(_Payload):
    """The session is usable again; the memories discarded when it was archived stay discarded."""

    type: Literal["SessionUnarchived"] = "SessionUnarchived"
    name: str


class HistoryRewound(_Payload):
    """Events ``from_seq``..``to_seq`` of the session leave its history: an agent framework's
    session popped or cleared them (``facade.chat.rewind``). The log keeps them, so the trace,
    replay of earlier turns and ``kairox events`` still show them; later contexts (history and
    recall) do not."""

    type: Literal["HistoryRewound"] = "HistoryRewound"
    from_seq: int
    to_seq: int
    reason: str


class TurnFailed(_Payload):
    """A turn ended without its reply. Its user message stays in the log but is never replayed
    into a later context; ``refused`` marks a prompt that did not fit and was never sent."""

    type: Literal["TurnFailed"] = "TurnFailed"
    turn: int
    reason: str
    refused: bool = False


EventPayload = Annotated[
    SessionStarted
    | UserMessageAdded
    | ModelTokenDelta
    | ModelCallStarted
    | AssistantMessageCompleted
    | ToolInvocationCompleted
    | AgentItemRecorded
    | MemoryProposed
    | MemoryAccepted
    | MemoryRejected
    | MemoryEdited
    | MemoryDeleted
    | MemoryRestored
    | MemoryMarkerRejected
    | MemoryExtractionFailed
    | ModelNotice
    | ContextAssembled
    | ContextCompactionStarted
    | CompactionSummary
    | ContextCompactionCompleted
    | ContextCompactionFailed
    | ContextCompactionSkipped
    | ProfileSwitched
    | SessionArchived
    | SessionUnarchived
    | HistoryRewound
    | TurnFailed,
    Field(discriminator="type"),
]

PAYLOAD_ADAPTER: TypeAdapter[EventPayload] = TypeAdapter(EventPayload)


class StoredEvent(BaseModel):
    """An event as it sits in the log: envelope plus payload."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    seq: int
    ts: datetime
    session_id: str | None
    workspace_id: str | None
    type: str
    schema_version: int
    payload: EventPayload
    tokens: int | None = None


def payload_to_json(payload: EventPayload) -> str:
    """The canonical JSON of a payload: sorted keys, no spaces."""
    import json

    return json.dumps(
        payload.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def payload_from_json(text: str) -> EventPayload:
    return PAYLOAD_ADAPTER.validate_json(text)
