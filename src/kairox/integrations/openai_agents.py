"""``KairoxSession``: the OpenAI Agents SDK's ``Session`` over a Kairox session's event log
(``pip install "kairox[openai-agents]"``).

``Runner.run(agent, text, session=KairoxSession("support-42"))`` keeps the conversation in the
Kairox session of that name. ``get_items`` returns the history as a Kairox turn would assemble
it within the budget: the memory protocol, the approved memories and what recall brings back
come first (system items), then the trimmed history. ``add_items`` records what the agent ran
as a turn would (user messages, tool calls and results, replies), and ``<memory>`` markers in
the agent's replies become proposals through the approval policy (tainted by the tool results
and recalled text in that context). The log is append-only: ``pop_item`` and ``clear_session``
take items out of the session's history (later contexts and recall) and the log keeps them.

Items other than messages, function calls and their outputs (reasoning, hosted tool calls) have
no Kairox event and are not kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kairox.api import AsyncMemory, LoopThread
from kairox.app import ChatMessage, HistoryEntry, ModelProvider
from kairox.core.errors import InvalidInput
from kairox.core.events import UntrustedInput
from kairox.core.messages import ToolCall

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory.session_settings import SessionSettings

RECORDED_MODEL = "openai-agents"


class KairoxSession:
    """An Agents SDK session kept in the Kairox session ``session_id`` of ``workspace``.

    ``budget`` caps the prompt tokens ``get_items`` assembles (default: the window of ``model``,
    or of the workspace profile's model, less its reply headroom); ``model`` (a spec or a
    provider) picks the tokenizer and window to count with; ``home`` defaults to the CLI's.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        workspace: str | Path | None = None,
        budget: int | None = None,
        model: str | ModelProvider | None = None,
        home: str | Path | None = None,
    ) -> None:
        self.session_id = session_id
        self._budget = budget
        self._model = model
        self._loop = LoopThread("kairox-agents-session", owner="KairoxSession")
        self._memory = AsyncMemory(home, workspace=workspace)
        self._id: str | None = None
        self._untrusted: tuple[UntrustedInput, ...] = ()

    # -- the Session protocol ----------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The context a Kairox turn would carry, as input items (the latest ``limit``)."""
        items = await self._loop.arun(self._get_items())
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Record the items in the session's log; markers in replies become proposals."""
        messages = [m for item in items for m in _to_messages(item)]
        if messages:
            await self._loop.arun(self._record(messages))

    async def pop_item(self) -> TResponseInputItem | None:
        """Take the most recent history item out of the session and return it."""
        return await self._loop.arun(self._pop())

    async def clear_session(self) -> None:
        """Take every item out of the session's history (the log keeps them)."""
        await self._loop.arun(self._clear())

    def close(self) -> None:
        """Close the Kairox home this session opened."""
        if self._loop.closed:
            return
        try:
            self._loop.run(self._memory.close())
        finally:
            self._loop.stop()

    # -- on the session's loop ---------------------------------------------------------------

    async def _session(self) -> str:
        if self._id is None:
            info = await self._memory.facade.sessions.ensure(
                self.session_id, workspace=self._memory.workspace
            )
            self._id = info.id
        return self._id

    async def _get_items(self) -> list[TResponseInputItem]:
        session = await self._session()
        chat = self._memory.facade.chat
        history = await chat.history(session)
        query = next(
            (m.content for e in reversed(history) for m in e.messages if m.role == "user"), None
        )
        context = await chat.assemble(session, query, model=self._model, budget=self._budget)
        self._untrusted = context.untrusted
        messages = context.messages[:-1] if query is not None else context.messages
        return [item for m in messages for item in _to_items(m)]

    async def _record(self, messages: list[ChatMessage]) -> None:
        session = await self._session()
        await self._memory.facade.chat.record(
            session, messages, untrusted=self._untrusted, model=RECORDED_MODEL
        )

    async def _pop(self) -> TResponseInputItem | None:
        session = await self._session()
        chat = self._memory.facade.chat
        history = await chat.history(session)
        if not history:
            return None
        last = history[-1]
        await chat.rewind(
            session,
            from_seq=min(last.seqs),
            to_seq=max(last.seqs),
            reason="popped by the OpenAI Agents SDK session",
        )
        return _last_item(last)

    async def _clear(self) -> None:
        session = await self._session()
        chat = self._memory.facade.chat
        history = await chat.history(session)
        if history:
            last = max(seq for entry in history for seq in entry.seqs)
            await chat.rewind(
                session, from_seq=1, to_seq=last, reason="cleared by the OpenAI Agents SDK session"
            )


# -- items <-> messages ----------------------------------------------------------------------


def _to_items(message: ChatMessage) -> list[TResponseInputItem]:
    items: list[dict[str, Any]] = []
    if message.role == "tool":
        items.append(
            {
                "type": "function_call_output",
                "call_id": message.tool_call_id or "",
                "output": message.content,
            }
        )
    elif message.tool_calls:
        items.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
            for call in message.tool_calls
        )
    else:
        items.append({"role": message.role, "content": message.content})
    return cast("list[TResponseInputItem]", items)


def _last_item(entry: HistoryEntry) -> TResponseInputItem | None:
    items = [item for m in entry.messages for item in _to_items(m)]
    return items[-1] if items else None


def _to_messages(item: object) -> list[ChatMessage]:
    data = _as_mapping(item)
    kind = data.get("type")
    if kind == "function_call":
        call = ToolCall(
            id=str(data.get("call_id") or data.get("id") or ""),
            name=str(data.get("name") or "tool"),
            arguments=str(data.get("arguments") or "{}"),
        )
        return [ChatMessage(role="assistant", content="", tool_calls=(call,))]
    if kind == "function_call_output":
        return [
            ChatMessage(
                role="tool",
                content=_text(data.get("output")),
                tool_call_id=str(data.get("call_id") or ""),
            )
        ]
    role = data.get("role")
    if kind not in (None, "message") or role not in ("user", "assistant", "system", "developer"):
        return []  # reasoning, hosted tools: no Kairox event holds them
    return [
        ChatMessage(
            role="system" if role == "developer" else role,
            content=_text(data.get("content")),
        )
    ]


def _as_mapping(item: object) -> Mapping[str, Any]:
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        dumped = dump(exclude_unset=True)
        if isinstance(dumped, Mapping):
            return dumped
    raise InvalidInput(f"an Agents SDK item must be a dict, got {type(item).__name__}")


def _text(content: object) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text") or part.get("refusal")
                if isinstance(text, str):
                    parts.append(text)
        return "".join(parts)
    return json.dumps(content, default=str)
