"""History items: built from the log with cached counts, summaries in place of their range."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from assembly_support import REGISTRY, SESSION, Home, words

from kairox.context.history import chat_counter_name, load_history
from kairox.context.tokens import Tokenizer
from kairox.core.events import (
    ModelTokenDelta,
    SessionStarted,
    ToolInvocationCompleted,
    UserMessageAdded,
)
from kairox.core.messages import ChatMessage


class CountingTokenizer:
    """A real tokenizer that records every text it is asked to count."""

    def __init__(self, inner: Tokenizer) -> None:
        self.inner = inner
        self.counted: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def estimated(self) -> bool:
        return self.inner.estimated

    def count(self, text: str) -> int:
        self.counted.append(text)
        return self.inner.count(text)

    def encode(self, text: str) -> list[int]:
        return self.inner.encode(text)

    def decode(self, tokens: Sequence[int]) -> str:
        return self.inner.decode(tokens)

    def truncate(self, text: str, max_tokens: int) -> str:
        return self.inner.truncate(text, max_tokens)

    def message_overhead(self, message: ChatMessage) -> int:
        return self.inner.message_overhead(message)

    def reply_overhead(self) -> int:
        return self.inner.reply_overhead()

    def count_messages(self, messages: Sequence[ChatMessage]) -> int:
        return self.inner.count_messages(messages)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path, REGISTRY.get("o200k_base"))


def exact(tokenizer: Tokenizer, messages: tuple[ChatMessage, ...]) -> int:
    return tokenizer.count_messages(messages) - tokenizer.reply_overhead()


def test_items_follow_the_log_and_cost_exactly_what_their_messages_count(home: Home) -> None:
    home.append(SessionStarted(name="s", workspace_path="/w", profile="p"))
    u = home.user("read the config please")
    t = home.tool("[server]\nport = 8080\n", arguments='{"path": "config.toml"}')
    home.append(ModelTokenDelta(turn=1, text="The port "))
    a = home.assistant("The port is 8080.")
    items = load_history(home.events, SESSION, home.tokenizer)
    assert [(i.seq, i.kind) for i in items] == [
        (u.seq, "user"),
        (t.seq, "tool"),
        (a.seq, "assistant"),
    ]
    call, result = items[1].messages
    assert call.role == "assistant" and call.tool_calls[0].name == "read_file"
    assert call.tool_calls[0].arguments == '{"path": "config.toml"}'
    assert result.role == "tool" and result.content == "[server]\nport = 8080\n"
    assert result.tool_call_id == call.tool_calls[0].id
    for item in items:
        assert item.tokens == exact(home.tokenizer, item.messages)
        assert item.ref == f"seq:{item.seq}"


def test_until_seq_is_inclusive(home: Home) -> None:
    first = home.user("one")
    home.assistant("two")
    home.user("three")
    items = load_history(home.events, SESSION, home.tokenizer, until_seq=first.seq + 1)
    assert [i.messages[0].content for i in items] == ["one", "two"]


def test_other_sessions_are_not_history(home: Home) -> None:
    home.user("mine")
    home.events.append(
        UserMessageAdded(turn=1, text="theirs"),
        session_id="other",
        workspace_id="ws",
        counter=home.tokenizer,
    )
    assert [i.messages[0].content for i in load_history(home.events, SESSION, home.tokenizer)] == [
        "mine"
    ]


def test_a_summary_replaces_its_range_and_sits_where_the_range_ended(home: Home) -> None:
    first = home.user("old question")
    home.assistant("old answer")
    end = home.user("old follow-up")
    kept = home.assistant("recent answer that the compaction kept")
    summary = home.summary(first.seq, end.seq, "They discussed the old question.")
    later = home.user("new question")
    items = load_history(home.events, SESSION, home.tokenizer)
    assert [i.seq for i in items] == [summary.seq, kept.seq, later.seq]
    note = items[0]
    assert note.kind == "summary" and note.replaces == (first.seq, end.seq)
    assert note.messages[0].role == "assistant"  # the model's note, not the user's words
    assert note.messages[0].content.startswith("<kairox:summary>")
    assert "They discussed the old question." in note.messages[0].content
    assert note.tokens == exact(home.tokenizer, note.messages)


def test_a_later_summary_supersedes_the_earlier_one(home: Home) -> None:
    a = home.user("a")
    b = home.assistant("b")
    s1 = home.summary(a.seq, b.seq, "first summary")
    c = home.user("c")
    d = home.assistant("d")
    s2 = home.summary(a.seq, d.seq, "second summary", previous=s1.seq)
    e = home.user("e")
    items = load_history(home.events, SESSION, home.tokenizer)
    assert [i.seq for i in items] == [s2.seq, e.seq]
    assert "second summary" in items[0].messages[0].content
    assert c.seq < d.seq  # both replaced


def test_max_tokens_reads_newest_first_and_stops_after_the_cut(home: Home) -> None:
    for n in range(600):  # more than two pages
        home.user(words(20, f"u{n}_"))
    full = load_history(home.events, SESSION, home.tokenizer)
    limit = sum(i.tokens for i in full[-50:])
    part = load_history(home.events, SESSION, home.tokenizer, max_tokens=limit)
    assert part == full[-51:]  # the 50 that fit, plus the one at the cut
    assert sum(i.tokens for i in part) > limit


def test_max_tokens_skips_a_replaced_range_without_reading_it(home: Home) -> None:
    first = home.user("start")
    for n in range(700):
        home.assistant(words(5, f"a{n}_"))
    end = home.user("end of the old part")
    summary = home.summary(first.seq, end.seq, "the long past")
    recent = home.user("recent")
    items = load_history(home.events, SESSION, home.tokenizer, max_tokens=10_000)
    assert [i.seq for i in items] == [summary.seq, recent.seq]


def test_cached_counts_are_read_not_recomputed(home: Home, tmp_path: Path) -> None:
    counting = CountingTokenizer(home.tokenizer)
    for n in range(20):
        home.user(words(30, f"q{n}"))
        home.tool(words(50, f"r{n}"))
        home.assistant(words(40, f"a{n}"))
    home.summary(1, 6, "summary of the first turns")
    first = load_history(home.events, SESSION, counting)
    assert counting.counted  # tool pairs and the summary: their chat cost is computed once
    rows = home.db.query(
        "SELECT count(*) AS n FROM event_tokens WHERE tokenizer = ?",
        (chat_counter_name(home.tokenizer),),
    )
    assert rows[0]["n"] == 18 + 1  # the 18 tool pairs outside the summary, and the summary
    counting.counted.clear()
    again = load_history(home.events, SESSION, counting)
    assert again == first
    assert counting.counted == []  # nothing re-tokenised on the second read


def test_a_new_tokenizer_computes_missing_counts_once(home: Home) -> None:
    for n in range(5):
        home.user(words(10, f"x{n}"))
        home.tool(words(15, f"y{n}"))
        home.assistant(words(12, f"z{n}"))
    cl100k = CountingTokenizer(REGISTRY.get("cl100k_base"))
    items = load_history(home.events, SESSION, cl100k)
    assert cl100k.counted
    for item in items:
        assert item.tokens == exact(cl100k.inner, item.messages)
    cl100k.counted.clear()
    assert load_history(home.events, SESSION, cl100k) == items
    assert cl100k.counted == []


def test_tool_pairs_with_the_same_text_keep_their_own_exact_cost(home: Home) -> None:
    home.user("twice")
    home.tool("same result", arguments="{}")
    home.append(  # same name, arguments and result; a call id of a different length
        ToolInvocationCompleted(
            turn=1,
            call_id="call_with_a_much_longer_identifier_9f8e7d",
            name="read_file",
            arguments="{}",
            result="same result",
        )
    )
    items = load_history(home.events, SESSION, home.tokenizer)
    assert items[1].tokens != items[2].tokens
    for item in load_history(home.events, SESSION, home.tokenizer):
        assert item.tokens == exact(home.tokenizer, item.messages)


def test_an_empty_assistant_reply_is_not_history(home: Home) -> None:
    home.user("call a tool")
    home.tool("result")
    home.assistant("")
    assert [i.kind for i in load_history(home.events, SESSION, home.tokenizer)] == ["user", "tool"]
