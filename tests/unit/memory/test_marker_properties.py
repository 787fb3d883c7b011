"""Properties of the <memory> marker filter: streaming equals batch for every chunking, the
visible text never carries a marker, and no character of a reply is ever lost."""

from __future__ import annotations

import itertools
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kairox.memory.markers import (
    MarkerStream,
    ParseResult,
    parse_memory_markers,
    strip_memory_markers,
)

PROPERTY_SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

MARKERS = [
    '<memory scope="session">a fact</memory>',
    "<memory scope='user' key='editor.font'>JetBrains Mono</memory>",
    '<memory key="style" scope="workspace">Conventional Commits</memory>',
    '<memory  scope = "session"\t>spaced</memory>',
    '<memory scope="global">unknown scope</memory>',
    '<memory scope="user">no key</memory>',
    '<memory scope="session"> </memory>',
    "<memory>no scope</memory>",
    '<memory scope="session" ttl="1">extra</memory>',
    "<memory scope=session>unquoted</memory>",
    '<memory scope="session"/>',
    '<memory scope="session">nested <memory scope="session">x</memory> tail</memory>',
    '<memory\n  scope="workspace"\n  key="k">multi-line tag</memory>',
    '<memory scope="session">near-miss close</memory >',
    '<memory scope="session">far close</memory                    >',
]
FRAGMENTS = [
    '<memory scope="session">',
    '<memory scope="user" key="k">',
    "<memory ",
    "<memory",
    "<memoryx>",
    "</memory>",
    "</memo",
    "<memo",
    "<memorable>",
    "<mem",
    "ory",
    "<",
    ">",
    "/>",
    'scope="',
    "key='",
    '"',
    "=",
]
CODE = [
    "`",
    "``",
    "```",
    "~~~",
    "````",
    "\n```\n",
    "\n~~~\n",
    "\n   ```py\n",
    "\n  ~~~~\n",
    "\n ```",
    "    ```",
    "`<memory>`",
]
SPACING = ["\n", " ", "   ", "\t", "\r\n", "\n\n"]
WORDS = st.text(alphabet="abmory <>/=\"'\n`~ ", max_size=8)


def documents(*, code: bool) -> st.SearchStrategy[str]:
    pools = MARKERS + FRAGMENTS + SPACING + (CODE if code else [])
    piece = st.one_of(st.sampled_from(pools), WORDS if code else WORDS.map(_no_code))
    return st.lists(piece, max_size=30).map("".join)


def _no_code(text: str) -> str:
    return text.replace("`", "'").replace("~", "-")


@st.composite
def document_and_cuts(draw: st.DrawFn, *, code: bool = True) -> tuple[str, list[str]]:
    text = draw(documents(code=code))
    cuts = draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=len(text) + 1))
    bounds = [0, *sorted(cuts), len(text)]
    return text, [text[a:b] for a, b in itertools.pairwise(bounds)]


def stream(
    deltas: list[str], *, max_tag: int = 512, max_body: int = 4000
) -> tuple[list[ParseResult], ParseResult]:
    marker_stream = MarkerStream(max_tag=max_tag, max_body=max_body)
    results = [marker_stream.feed(delta) for delta in deltas]
    return results, marker_stream.close()


def combined(results: list[ParseResult], last: ParseResult) -> ParseResult:
    every = [*results, last]
    return ParseResult(
        "".join(r.visible for r in every),
        [m for r in every for m in r.markers],
        [x for r in every for x in r.rejected],
    )


@PROPERTY_SETTINGS
@given(document_and_cuts())
def test_streaming_equals_batch_for_any_chunking(case: tuple[str, list[str]]) -> None:
    text, deltas = case
    assert "".join(deltas) == text
    assert combined(*stream(deltas)) == parse_memory_markers(text)


@PROPERTY_SETTINGS
@given(documents(code=True))
def test_one_character_deltas_equal_batch(text: str) -> None:
    assert combined(*stream(list(text))) == parse_memory_markers(text)


@PROPERTY_SETTINGS
@given(document_and_cuts(code=False))
def test_visible_text_never_contains_a_marker_outside_code(case: tuple[str, list[str]]) -> None:
    text, deltas = case
    results, last = stream(deltas)
    visible = combined(results, last).visible
    assert "<memory" not in visible
    assert visible == strip_memory_markers(text)
    for result in [*results, last]:
        for rejected in result.rejected:
            assert rejected.reason and "\n" not in rejected.reason


@PROPERTY_SETTINGS
@given(st.text(alphabet="abmory <>/\n", max_size=40), st.integers(min_value=1, max_value=5))
def test_without_markers_only_a_possible_tag_start_is_held_back(text: str, width: int) -> None:
    """Text that never spells ``<memory`` comes out unchanged, held back at most ``<memor``s."""
    text = text.replace("<memory", "<memorx")
    marker_stream = MarkerStream()
    seen = ""
    out = ""
    for start in range(0, len(text), width):
        seen += text[start : start + width]
        result = marker_stream.feed(text[start : start + width])
        assert result.markers == [] and result.rejected == []
        out += result.visible
        assert seen.startswith(out)
        held = seen[len(out) :]
        assert held == "" or (held.startswith("<") and len(held) <= 2 * len("<memor"))
        assert all("<memory".startswith("<" + part) for part in held.split("<")[1:])
    out += marker_stream.close().visible
    assert out == text


@PROPERTY_SETTINGS
@given(
    document_and_cuts(),
    st.integers(min_value=8, max_value=40),
    st.integers(min_value=1, max_value=40),
)
def test_streaming_equals_batch_with_tight_bounds(
    case: tuple[str, list[str]], max_tag: int, max_body: int
) -> None:
    """Abandoning a marker that runs past its bound gives the same result for every chunking."""
    text, deltas = case
    batch = combined(*stream([text], max_tag=max_tag, max_body=max_body))
    assert combined(*stream(deltas, max_tag=max_tag, max_body=max_body)) == batch


@PROPERTY_SETTINGS
@given(
    document_and_cuts(),
    st.integers(min_value=8, max_value=600),
    st.integers(min_value=1, max_value=4000),
)
def test_every_character_is_accounted_for(
    case: tuple[str, list[str]], max_tag: int, max_body: int
) -> None:
    """Visible text, the markers and the rejected text together hold every character once."""
    text, deltas = case
    result = combined(*stream(deltas, max_tag=max_tag, max_body=max_body))
    pieces = [result.visible, *(m.raw for m in result.markers), *(r.raw for r in result.rejected)]
    assert sum(len(piece) for piece in pieces) == len(text)
    assert Counter("".join(pieces)) == Counter(text)


@PROPERTY_SETTINGS
@given(st.text(max_size=60), st.text(alphabet="abc \n", max_size=60))
def test_an_unclosed_marker_never_hides_what_follows(before: str, after: str) -> None:
    before = before.replace("<", "(").replace("`", "'").replace("~", "-")
    text = f'{before}<memory scope="workspace" key="k">{after}'
    assert parse_memory_markers(text).visible == before + after
