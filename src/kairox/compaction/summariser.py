"""The summary model call: the layer and the previous summary in, one summary text out.

The runtime resolves the model (the profile's ``summary_profile``, or the session's own profile)
and passes it in as a ``SummaryModel``. The call is recorded as a ``ModelCallStarted`` with
purpose ``summary`` and asks for decisions, open tasks, file paths and the facts the user stated.
Any failure is a ``SummaryFailed``; the pipeline retries, then leaves the context as it was or
falls back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kairox.compaction.layers import Layer, transcript_line
from kairox.context.render import marker
from kairox.context.tokens import Tokenizer
from kairox.context.windows import Budget
from kairox.core.errors import KairoxError
from kairox.core.events import EventPayload, ModelCallStarted, StoredEvent
from kairox.core.messages import ChatMessage
from kairox.memory.markers import strip_memory_markers
from kairox.models import ModelProvider, ModelRequest, collect

Append = Callable[[EventPayload], Awaitable[StoredEvent]]

SUMMARY_INSTRUCTIONS = """\
You compress the oldest part of a conversation into a note that replaces it in the context of \
later turns. The note is all that will remain of those messages, so keep:
- every decision that was made, and why if it was said;
- every open task, copied verbatim from the list you are given;
- every file path, command or identifier that was mentioned;
- every fact the user stated about themselves, the project or the world.
Fold the previous summary in: keep what still holds, update what changed. Drop greetings and \
small talk. Write short plain sentences or bullet points. Do not write <memory> markers and do \
not address the user."""

MIN_SUMMARY_TOKENS = 32


class SummaryFailed(KairoxError):
    """The summary model failed or returned nothing usable."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"summary failed: {reason}")


@dataclass(frozen=True)
class SummaryModel:
    """The model that writes summaries, with its own window and tokenizer."""

    alias: str
    provider: ModelProvider
    tokenizer: Tokenizer
    budget: Budget


def summary_messages(layer: Layer, *, tokenizer: Tokenizer, budget: int) -> tuple[ChatMessage, ...]:
    """The request: instructions, then the previous summary, the open tasks and the layer. The
    transcript is cut, with a visible marker, if the whole would not fit ``budget``."""
    head: list[str] = []
    if layer.previous is not None:
        p = layer.previous
        head.append(f"Previous summary (events {p.from_seq}-{p.to_seq}):\n{p.text}")
    if layer.open_tasks:
        tasks = "\n".join(f"- {t}" for t in layer.open_tasks)
        head.append(f"Open tasks (copy each one verbatim into the summary):\n{tasks}")
    head.append(f"Conversation to summarise (events {layer.layer_from_seq}-{layer.to_seq}):")
    transcript = "\n\n".join(transcript_line(i) for i in layer.items)
    system = ChatMessage(role="system", content=SUMMARY_INSTRUCTIONS)

    def build(body: str) -> tuple[ChatMessage, ...]:
        return system, ChatMessage(role="user", content="\n\n".join([*head, body]))

    messages = build(transcript)
    excess = tokenizer.count_messages(messages) - budget
    if excess > 0:
        total = tokenizer.count(transcript)
        kept = max(0, total - excess - tokenizer.count(marker(total)) - 2)
        messages = build(tokenizer.truncate(transcript, kept) + marker(total - kept))
    return messages


async def call_summary_model(
    model: SummaryModel,
    layer: Layer,
    *,
    session_id: str,
    call_index: int,
    turn: int,
    append: Append,
) -> str:
    """One summary call; raises ``SummaryFailed`` on a model failure or an empty reply.

    ``call_index`` is the number of earlier summary calls in the session, as ``ModelRequest``
    requires (the scripted model picks its n-th ``"purpose": "summary"`` line by it).
    """
    await append(
        ModelCallStarted(
            turn=turn, purpose="summary", model=model.provider.spec, call_index=call_index
        )
    )
    messages = summary_messages(layer, tokenizer=model.tokenizer, budget=model.budget.budget)
    want = max(MIN_SUMMARY_TOKENS, min(model.budget.headroom, layer.tokens_before // 2))
    request = ModelRequest(
        messages=messages,
        session_id=session_id,
        call_index=call_index,
        max_tokens=want,
        purpose="summary",
    )
    reply = await collect(model.provider.stream(request))
    if reply.failure is not None:
        raise SummaryFailed(reply.failure.reason)
    text = strip_memory_markers(reply.text).strip()
    if not text:
        raise SummaryFailed("the summary model returned no text")
    return text
