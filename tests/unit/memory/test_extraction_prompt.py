"""The extraction call's messages: instructions, worked exchanges as chat turns, then the real
conversation; the grammar allows "none" or up to three markers; copies of the worked answers are
refused for every model."""

from __future__ import annotations

import re

from kairox.core.messages import ChatMessage
from kairox.core.records import MemoryRecord
from kairox.core.types import MemoryScope
from kairox.memory.extraction import EXTRACTION_GRAMMAR, extraction_messages, parse_extraction
from kairox.memory.markers import parse_memory_markers
from kairox.memory.protocol import EXTRACTION_EXAMPLES, EXTRACTION_PROMPT
from kairox.memory.service import MemoryPolicy, Proposal, copied_from_examples

# EXTRACTION_GRAMMAR as a regular expression (GBNF ``{0,31}`` and classes mean the same here).
MARKER = r'<memory scope="(user|workspace)" key="[a-z][a-z0-9._-]{0,31}">[^<>\n]+</memory>'
ANSWER = re.compile(rf"none|{MARKER}(?:\n{MARKER}){{0,2}}")


def test_the_grammar_is_the_one_this_test_mirrors() -> None:
    assert 'root ::= "none" | marker ("\\n" marker)? ("\\n" marker)?' in EXTRACTION_GRAMMAR


def test_worked_exchanges_come_before_the_conversation() -> None:
    # Only the fields the extraction call reads.
    known = MemoryRecord.model_construct(
        scope=MemoryScope.USER, key="user.name", body="The user's name is Dana"
    )
    conversation = [ChatMessage(role="user", content="We deploy with Helm.")]
    messages = extraction_messages(conversation, [known])
    assert messages[0].role == "system" and messages[0].content == EXTRACTION_PROMPT
    pairs = messages[1:-1]
    assert [m.role for m in pairs] == ["user", "assistant"] * len(EXTRACTION_EXAMPLES)
    for (said, answer), (asked, replied) in zip(
        EXTRACTION_EXAMPLES, zip(pairs[::2], pairs[1::2], strict=True), strict=True
    ):
        assert said in asked.content and "(none)" in asked.content
        assert replied.content == answer
    last = messages[-1]
    assert last.role == "user" and "We deploy with Helm." in last.content
    assert "user user.name: The user's name is Dana" in last.content
    # Only the real request carries the known memories and the conversation.
    assert all("Helm" not in m.content and "Dana" not in m.content for m in messages[:-1])


def test_every_worked_answer_is_one_the_grammar_allows_and_both_kinds_are_shown() -> None:
    answers = [answer for _, answer in EXTRACTION_EXAMPLES]
    assert all(ANSWER.fullmatch(a) for a in answers)
    assert "none" in answers
    scopes = {m.scope for a in answers for m in parse_memory_markers(a).markers}
    assert scopes == {MemoryScope.USER, MemoryScope.WORKSPACE}
    assert parse_extraction("none", session=False).markers == []


def test_copies_of_the_worked_answers_are_refused_for_every_model() -> None:
    texts = MemoryPolicy().example_texts
    for _, answer in EXTRACTION_EXAMPLES:
        for marker in parse_memory_markers(answer).markers:
            assert marker.key is not None
            same_key = Proposal(marker.scope, marker.key, "Something else entirely.")
            assert copied_from_examples(same_key, texts) is not None
            same_body = Proposal(marker.scope, "other.key", marker.body)
            assert copied_from_examples(same_body, texts) is not None
    own = Proposal(MemoryScope.WORKSPACE, "deploy.tool", "The project deploys with Helm.")
    assert copied_from_examples(own, texts) is None
