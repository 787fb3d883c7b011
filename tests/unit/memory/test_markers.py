"""Unit tests for the <memory> marker grammar, one rule (or decision) per test."""

from __future__ import annotations

import dataclasses

import pytest

from kairox.core.errors import InvalidInput
from kairox.core.types import MemoryScope
from kairox.memory._marker_grammar import (
    REASON_EMPTY,
    REASON_UNCLOSED_BODY,
    REASON_UNCLOSED_TAG,
)
from kairox.memory.markers import (
    MarkerStream,
    MemoryMarker,
    ParseResult,
    RejectedMarker,
    extract_memory_markers,
    parse_memory_markers,
    strip_memory_markers,
)

SESSION = '<memory scope="session">Prefers explanations before code.</memory>'


def stream_all(deltas: list[str]) -> ParseResult:
    stream = MarkerStream()
    results = [stream.feed(delta) for delta in deltas]
    results.append(stream.close())
    return ParseResult(
        "".join(r.visible for r in results),
        [m for r in results for m in r.markers],
        [x for r in results for x in r.rejected],
    )


def only_rejection(text: str) -> RejectedMarker:
    result = parse_memory_markers(text)
    assert result.markers == []
    assert len(result.rejected) == 1
    return result.rejected[0]


# --- valid markers -------------------------------------------------------------------------------


def test_session_marker_is_extracted_and_stripped() -> None:
    result = parse_memory_markers(f"Sure. {SESSION} Here is the code.")
    assert result.visible == "Sure.  Here is the code."
    assert result.markers == [
        MemoryMarker(MemoryScope.SESSION, None, "Prefers explanations before code.", SESSION)
    ]
    assert result.rejected == []


def test_user_and_workspace_markers_carry_their_key() -> None:
    text = (
        '<memory scope="user" key="editor.font">JetBrains Mono 14px.</memory>'
        '<memory scope="workspace" key="commit.style">Conventional Commits.</memory>'
    )
    markers = extract_memory_markers(text)
    assert [(m.scope, m.key, m.body) for m in markers] == [
        (MemoryScope.USER, "editor.font", "JetBrains Mono 14px."),
        (MemoryScope.WORKSPACE, "commit.style", "Conventional Commits."),
    ]
    assert all(isinstance(m.scope, MemoryScope) for m in markers)


@pytest.mark.parametrize(
    "tag",
    [
        '<memory key="k" scope="user">',
        "<memory scope='user' key='k'>",
        "<memory key='k' scope=\"user\">",
        '<memory   scope = "user"\tkey=  "k"  >',
        '<memory\tscope="user" key="k">',
    ],
)
def test_attributes_in_any_order_quotes_and_spacing(tag: str) -> None:
    (marker,) = extract_memory_markers(f"{tag}body</memory>")
    assert (marker.scope, marker.key, marker.body) == (MemoryScope.USER, "k", "body")
    assert marker.raw == f"{tag}body</memory>"


def test_body_is_trimmed_and_may_span_lines() -> None:
    (marker,) = extract_memory_markers(
        '<memory scope="session">\n  line one\n  line two \n</memory>'
    )
    assert marker.body == "line one\n  line two"


def test_attribute_values_are_trimmed_and_session_may_have_a_key() -> None:
    (marker,) = extract_memory_markers('<memory scope=" session " key=" topic ">x</memory>')
    assert (marker.scope, marker.key) == (MemoryScope.SESSION, "topic")
    (marker,) = extract_memory_markers('<memory scope="session" key="">x</memory>')
    assert marker.key is None


def test_markers_come_out_in_order_with_text_between_them_visible() -> None:
    text = 'a<memory scope="session">1</memory>b<memory scope="session">2</memory>c'
    result = parse_memory_markers(text)
    assert result.visible == "abc"
    assert [m.body for m in result.markers] == ["1", "2"]


def test_marker_body_may_contain_backticks_and_angle_brackets() -> None:
    (marker,) = extract_memory_markers('<memory scope="session">Use `a < b` here.</memory>')
    assert marker.body == "Use `a < b` here."


# --- rejected markers ----------------------------------------------------------------------------


def test_unknown_scope_is_rejected_and_never_becomes_session() -> None:
    text = 'x<memory scope="global">Remember this.</memory>y'
    result = parse_memory_markers(text)
    assert result.visible == "xy"
    assert result.markers == []
    assert result.rejected == [
        RejectedMarker(
            '<memory scope="global">Remember this.</memory>',
            "scope 'global' is not one of session, user, workspace",
        )
    ]


def test_scope_is_case_sensitive() -> None:
    assert "'User'" in only_rejection('<memory scope="User" key="k">x</memory>').reason


def test_missing_scope_is_rejected() -> None:
    assert only_rejection("<memory>x</memory>").reason.startswith("missing scope attribute")
    assert only_rejection('<memory key="k">x</memory>').reason.startswith("missing scope")


@pytest.mark.parametrize("scope", ["user", "workspace"])
@pytest.mark.parametrize("key", [None, "", "   "])
def test_user_and_workspace_markers_need_a_key(scope: str, key: str | None) -> None:
    attr = "" if key is None else f' key="{key}"'
    reason = only_rejection(f'<memory scope="{scope}"{attr}>x</memory>').reason
    assert reason == f"{scope} memory needs a key"


@pytest.mark.parametrize(
    ("text", "reason_part"),
    [
        ('<memory scope="session" ttl="3">x</memory>', "unknown attribute 'ttl'"),
        ('<memory scope="session" scope="user">x</memory>', "duplicate attribute 'scope'"),
        ("<memory scope=session>x</memory>", "needs a quoted value"),
        ("<memory scope>x</memory>", "has no value"),
        ('<memory scope="session" key="a>b">x</memory>', "unterminated quoted value"),
        ("<memoryfoo>x</memory>", "expected a space or '>'"),
        ('<memory "session">x</memory>', "malformed <memory> tag"),
    ],
)
def test_malformed_tags_are_rejected_with_a_reason(text: str, reason_part: str) -> None:
    result = parse_memory_markers(text)
    assert result.markers == []
    assert [r.reason for r in result.rejected if reason_part in r.reason]
    assert "<memory" not in result.visible


def test_reasons_are_one_line() -> None:
    texts = ['<memory scope="x\ty">b</memory>', "<memory scope=a b>b</memory>", "<memory\n"]
    for text in texts:
        for rejected in parse_memory_markers(text).rejected:
            assert "\n" not in rejected.reason
            assert rejected.reason


def test_rejected_markers_never_show_in_visible_text() -> None:
    text = 'keep <memory scope="user">no key</memory>this <memory scope="x">bad</memory>too'
    result = parse_memory_markers(text)
    assert result.visible == "keep this too"
    assert [r.raw for r in result.rejected] == [
        '<memory scope="user">no key</memory>',
        '<memory scope="x">bad</memory>',
    ]


def test_self_closing_marker_is_rejected_and_has_no_body() -> None:
    result = parse_memory_markers('a<memory scope="session"/>b</memory>')
    assert result.visible == "ab</memory>"
    assert [r.raw for r in result.rejected] == ['<memory scope="session"/>']
    assert "self-closing" in result.rejected[0].reason


def test_nested_marker_ends_at_the_first_close_and_is_rejected() -> None:
    text = '<memory scope="session">a <memory scope="session">b</memory> c</memory>'
    result = parse_memory_markers(text)
    assert result.visible == " c</memory>"
    assert result.markers == []
    assert result.rejected[0].raw == '<memory scope="session">a <memory scope="session">b</memory>'
    assert result.rejected[0].reason == "nested <memory> tag inside a marker body"


# --- empty bodies --------------------------------------------------------------------------------


@pytest.mark.parametrize("body", ["", "   ", "\n\t \n"])
def test_empty_body_is_removed_and_reported(body: str) -> None:
    raw = f'<memory scope="session">{body}</memory>'
    result = parse_memory_markers(f"a{raw}b")
    assert result == ParseResult("ab", [], [RejectedMarker(raw, REASON_EMPTY)])


def test_empty_body_is_reported_even_when_the_tag_is_bad() -> None:
    raw = '<memory scope="global"> </memory>'
    assert parse_memory_markers(raw) == ParseResult("", [], [RejectedMarker(raw, REASON_EMPTY)])


# --- unclosed markers never eat text --------------------------------------------------------------


def test_unclosed_marker_releases_its_text_at_end_of_stream() -> None:
    result = parse_memory_markers('Done. <memory scope="session">half a thought')
    assert result.visible == "Done. half a thought"
    assert result.markers == []
    assert result.rejected == [RejectedMarker('<memory scope="session">', REASON_UNCLOSED_BODY)]


def test_near_miss_close_tag_with_a_space_still_closes() -> None:
    text = 'Noted <memory scope="workspace" key="k">Use ruff.</memory > The answer is 42.'
    result = parse_memory_markers(text)
    assert result.visible == "Noted  The answer is 42."
    assert [(m.key, m.body) for m in result.markers] == [("k", "Use ruff.")]
    assert result.markers[0].raw == '<memory scope="workspace" key="k">Use ruff.</memory >'


def test_a_close_tag_with_too_much_space_is_text_and_the_marker_is_released() -> None:
    close = "</memory" + " " * 17 + ">"
    text = f'a <memory scope="session">b{close} c'
    result = parse_memory_markers(text)
    assert result.visible == f"a b{close} c"
    assert result.rejected == [RejectedMarker('<memory scope="session">', REASON_UNCLOSED_BODY)]


@pytest.mark.parametrize("tail", ["<memory", '<memory scope="user" key="k"', "<memory "])
def test_unclosed_open_tag_at_end_of_stream_releases_what_follows(tail: str) -> None:
    result = parse_memory_markers(f"ok {tail}")
    assert result.visible == "ok " + tail[len("<memory") :]
    assert result.rejected == [RejectedMarker("<memory", REASON_UNCLOSED_TAG)]


def test_open_tag_may_span_lines() -> None:
    text = 'a <memory\n  scope="workspace"\n  key="k">b</memory> c'
    result = parse_memory_markers(text)
    assert result.visible == "a  c"
    assert [(m.scope, m.key, m.body) for m in result.markers] == [(MemoryScope.WORKSPACE, "k", "b")]


def test_open_tag_without_a_gt_in_time_is_abandoned() -> None:
    stream = MarkerStream(max_tag=20)
    result = stream.feed('a <memory scope="session" and more words> b')
    tail = stream.close()
    assert result.visible + tail.visible == 'a  scope="session" and more words> b'
    assert result.rejected == [RejectedMarker("<memory", REASON_UNCLOSED_TAG)]


def test_body_without_a_close_in_time_is_released_while_streaming() -> None:
    stream = MarkerStream(max_body=10)
    out = stream.feed('x <memory scope="session">')
    out2 = stream.feed("0123456789abcdefghijklmnopqrstuvwxyz0123456789")
    assert out.visible == "x "
    assert out2.visible == "0123456789abcdefghijklmnopqrstuvwxyz0123456789"
    assert out2.rejected == [RejectedMarker('<memory scope="session">', REASON_UNCLOSED_BODY)]


def test_a_close_after_max_body_does_not_count() -> None:
    text = '<memory scope="session">' + "y" * 12 + "</memory>!"
    result = MarkerStream(max_body=10)
    head, tail = result.feed(text), result.close()
    assert head.visible + tail.visible == "y" * 12 + "</memory>!"
    assert head.markers == []


def test_released_text_is_scanned_for_later_markers() -> None:
    text = f'<memory scope="session">oops {SESSION} ok'
    result = parse_memory_markers(text)
    # The first marker's body runs to the first close, so it is a nested (rejected) marker.
    assert result.markers == []
    assert result.visible == " ok"
    text = f"<memory scope=session oops\n{SESSION} ok"
    result = MarkerStream(max_tag=30)
    head, tail = result.feed(text), result.close()
    assert head.visible + tail.visible == " scope=session oops\n ok"
    assert [m.body for m in head.markers + tail.markers] == ["Prefers explanations before code."]


# --- near misses are plain text ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "<memo",
        "a <memo b",
        "<memorable>",
        "</memory>",
        "stray </memory> close",
        '<Memory scope="session">x</Memory>',
        "<MEMORY>",
        "a < b and b > a",
        "<mem <memo <memor",
        "<<memor",
    ],
)
def test_near_misses_are_plain_text(text: str) -> None:
    assert parse_memory_markers(text) == ParseResult(text, [], [])


def test_removing_a_marker_cannot_assemble_a_new_one() -> None:
    text = '<mem<memory scope="session">a</memory>ory scope="session">b</memory>!'
    result = parse_memory_markers(text)
    assert result.visible == "!"
    assert [m.body for m in result.markers] == ["a", "b"]
    assert result.markers[1].raw == '<memory scope="session">b</memory>'


def test_a_prefix_before_a_marker_is_released_when_it_goes_nowhere() -> None:
    text = '<mem<memory scope="session">a</memory>o!'
    assert parse_memory_markers(text).visible == "<memo!"


# --- code is text --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fence",
    [
        "```\n{m}\n```\n",
        "```python\n{m}\n```\n",
        "~~~\n{m}\n~~~\n",
        "   ```\n{m}\n   ```\n",
        "````\n```\n{m}\n````\n",
        "```\n{m}\n```` \r\n",
        "~~~~\n~~~\n{m}\n~~~~\n",
    ],
)
def test_marker_inside_a_fenced_code_block_is_text(fence: str) -> None:
    code = fence.format(m=SESSION)
    result = parse_memory_markers(code + SESSION)
    assert result.visible == code
    assert len(result.markers) == 1


def test_fence_is_not_closed_by_other_characters_or_an_info_string() -> None:
    code = f"```\n~~~\n``` not closing\n{SESSION}\n```\n"
    assert parse_memory_markers(code + SESSION).visible == code


def test_unclosed_fence_runs_to_the_end() -> None:
    text = f"intro\n```\n{SESSION}\n\n{SESSION}"
    assert parse_memory_markers(text) == ParseResult(text, [], [])


def test_four_space_indent_does_not_open_a_fence() -> None:
    text = f"    ```\n{SESSION}"
    result = parse_memory_markers(text)
    assert result.visible == "    ```\n"
    assert len(result.markers) == 1


@pytest.mark.parametrize(
    "code",
    ["`{m}`", "``{m}``", "`` a ` {m} ``", "```{m}```"],
)
def test_marker_inside_inline_code_is_text(code: str) -> None:
    span = "see " + code.format(m=SESSION) + " then "
    result = parse_memory_markers(span + SESSION)
    assert result.visible == span
    assert len(result.markers) == 1


def test_unmatched_backtick_makes_the_rest_of_its_line_code() -> None:
    line = f"a ` b {SESSION}\n"
    result = parse_memory_markers(line + SESSION)
    assert result.visible == line
    assert len(result.markers) == 1


def test_inline_code_closes_only_on_the_same_run_length() -> None:
    text = f"``a`{SESSION}``{SESSION}"
    result = parse_memory_markers(text)
    assert result.visible == f"``a`{SESSION}``"
    assert len(result.markers) == 1


# --- streaming -----------------------------------------------------------------------------------


def test_stream_holds_back_only_a_possible_tag_start() -> None:
    stream = MarkerStream()
    assert stream.feed("Hello <mem").visible == "Hello "
    assert stream.feed("o").visible == ""
    assert stream.feed("s are fine").visible == "<memos are fine"
    assert stream.feed(" a <").visible == " a "
    assert stream.feed(" b").visible == "< b"
    assert stream.close() == ParseResult("", [], [])


def test_stream_reports_a_marker_on_the_feed_that_closes_it() -> None:
    stream = MarkerStream()
    first = stream.feed('Noted.<memory scope="user" key="tz">Europe/')
    assert first == ParseResult("Noted.", [], [])
    assert stream.feed("Paris</mem") == ParseResult("", [], [])
    last = stream.feed("ory> Next.")
    assert last.visible == " Next."
    assert [(m.scope, m.key, m.body) for m in last.markers] == [
        (MemoryScope.USER, "tz", "Europe/Paris")
    ]


@pytest.mark.parametrize(
    "deltas",
    [
        ["x", "\n  ~~~", "\n", SESSION, "\n ~~~", "\n", SESSION],
        ["x", "\n ```", "\n", SESSION, "\n  ```", "\n", SESSION],
        ["\n", "  ~~~", "\n", SESSION, "\n", "   ~~~", "\n", SESSION],
    ],
)
def test_indented_fences_are_seen_inside_a_single_delta(deltas: list[str]) -> None:
    result = stream_all(deltas)
    assert result == parse_memory_markers("".join(deltas))
    assert len(result.markers) == 1
    assert result.visible.count("<memory") == 1


def test_stream_char_by_char_equals_batch() -> None:
    text = (
        f"Intro `{SESSION}`\n```\n{SESSION}\n```\n{SESSION}\n"
        '<memory scope="nope">x</memory> <memo <memory scope="user">k</memory> end '
        '<memory scope="workspace" key="w">open'
    )
    assert stream_all(list(text)) == parse_memory_markers(text)


def test_stream_reports_unclosed_marker_on_close() -> None:
    stream = MarkerStream()
    stream.feed("a <memory scope=")
    closed = stream.close()
    assert closed == ParseResult(" scope=", [], [RejectedMarker("<memory", REASON_UNCLOSED_TAG)])
    assert stream.close() == ParseResult("", [], [])


def test_bounds_must_be_sensible() -> None:
    with pytest.raises(InvalidInput):
        MarkerStream(max_tag=3)
    with pytest.raises(InvalidInput):
        MarkerStream(max_body=0)


def test_close_releases_a_held_prefix() -> None:
    stream = MarkerStream()
    assert stream.feed("x <memor").visible == "x "
    assert stream.close() == ParseResult("<memor", [], [])


def test_feed_after_close_is_an_error() -> None:
    stream = MarkerStream()
    stream.close()
    with pytest.raises(InvalidInput, match="after close"):
        stream.feed("more")


def test_strip_and_extract_agree_with_parse() -> None:
    text = f"a{SESSION}b<memory scope='x'>y</memory>c"
    result = parse_memory_markers(text)
    assert strip_memory_markers(text) == result.visible == "abc"
    assert extract_memory_markers(text) == result.markers


def test_results_are_immutable() -> None:
    (marker,) = extract_memory_markers(SESSION)
    with pytest.raises(dataclasses.FrozenInstanceError):
        marker.body = "changed"  # type: ignore[misc]
    rejected = only_rejection("<memory>x</memory>")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rejected.reason = "changed"  # type: ignore[misc]
    result = parse_memory_markers("x")
    with pytest.raises(AttributeError):
        result.visible = "changed"  # type: ignore[misc]
