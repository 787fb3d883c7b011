"""``facade.chat.record`` / ``history`` / ``rewind`` (issue 24): an exchange an agent framework ran
is recorded as a turn would be, and a rewind takes items out of the history (later contexts and
recall) while the append-only log keeps them. On both stores."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kairox import AppFacade, InvalidInput, MemoryStatus
from kairox.core.messages import ChatMessage, ToolCall
from kairox.models import ModelRequest, StreamItem
from kairox.models.scripted import ScriptedProvider, ScriptLine


@pytest.fixture
def backend(on_store: str | None) -> str | None:
    return on_store


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


async def test_record_then_rewind(backend: str | None, workspace: Path) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text("[retrieval]\nworkspace_index = false\n")
    facade = AppFacade.open()
    try:
        info = await facade.sessions.ensure("agent", workspace=workspace)
        outcome = await facade.chat.record(
            info.id,
            [
                user("The vault code is 4711, keep it"),
                ChatMessage(
                    role="assistant",
                    content="",
                    tool_calls=(ToolCall(id="c1", name="vault", arguments="{}"),),
                ),
                ChatMessage(role="tool", content="vault opened", tool_call_id="c1"),
                assistant('Done. <memory scope="workspace" key="vault">Vault code 4711</memory>'),
            ],
            model="my-agent",
        )
        assert (outcome.turn, outcome.reply) == (1, "Done. ")
        [proposal] = outcome.proposals
        assert proposal.status is MemoryStatus.PENDING  # a workspace memory waits for the user
        assert [u.kind for u in proposal.untrusted_inputs] == ["tool_result"]
        await facade.chat.record(info.id, [user("Thanks"), assistant("Any time.")])
        history = await facade.chat.history(info.id)
        assert [m.content for e in history for m in e.messages if m.role == "user"] == [
            "The vault code is 4711, keep it",
            "Thanks",
        ]

        for i in range(12):  # push the first turn out of a small budget's history window
            await facade.chat.record(
                info.id, [user(f"filler {i} " + "lorem " * 30), assistant("ok " * 30)]
            )
        question = "what is the vault code 4711?"
        before = await facade.chat.assemble(info.id, question, budget=900)
        first_seq = f"seq:{min(history[0].seqs)}"

        if backend is None:  # recall over the Postgres log is issue 22's; the check after holds
            # recall finds it beyond the window (traced; the quota decides whether it goes in) ...
            assert first_seq in {i.ref for i in before.trace.items if i.source == "recall"}

        first = history[0]
        await facade.chat.rewind(
            info.id, from_seq=min(first.seqs), to_seq=max(first.seqs), reason="test"
        )
        after = await facade.chat.history(info.id)
        assert "4711, keep it" not in str([e.messages for e in after])
        assert [e.seqs for e in after[: len(history) - 1]] == [e.seqs for e in history[1:]]
        # ... and after the rewind, neither the history nor recall brings it back
        context = await facade.chat.assemble(info.id, question, budget=900)
        assert first_seq not in {i.ref for i in context.trace.items}
        assert "keep it" not in "\n".join(m.content for m in context.messages[:-1])
        # the log still holds it (append-only), with the rewind that took it out
        events = await facade.events.list(session=info.id)
        assert "The vault code is 4711, keep it" in [
            getattr(e.payload, "text", None) for e in events
        ]
        assert events[-1].payload.type == "HistoryRewound"
        with pytest.raises(InvalidInput, match="nothing to rewind"):
            await facade.chat.rewind(info.id, from_seq=9, to_seq=3, reason="test")
    finally:
        await facade.aclose()
        facade.close()


class Recording(ScriptedProvider):
    """The scripted model, keeping every request it is sent."""

    def __init__(self, lines: list[ScriptLine]) -> None:
        super().__init__(lines)
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.requests.append(request)
        return super().stream(request)


async def test_compaction_leaves_rewound_items_out(workspace: Path) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text("[retrieval]\nworkspace_index = false\n")
    model = Recording([ScriptLine(purpose="summary", text="They talked.")])
    facade = AppFacade.open(model=model)
    try:
        info = await facade.sessions.ensure("agent", workspace=workspace)
        await facade.chat.record(info.id, [user("The launch code is 0000"), assistant("Noted.")])
        for i in range(6):
            await facade.chat.record(info.id, [user(f"topic {i} " * 40), assistant("ok " * 40)])
        first = (await facade.chat.history(info.id))[0]
        await facade.chat.rewind(
            info.id, from_seq=min(first.seqs), to_seq=max(first.seqs), reason="test"
        )
        result = await facade.chat.compact(info.id)
        assert result.outcome == "summarised", result.reason
        [request] = [r for r in model.requests if r.purpose == "summary"]
        sent = "\n".join(m.content for m in request.messages)
        assert "topic 0" in sent and "launch code" not in sent
    finally:
        await facade.aclose()
        facade.close()
