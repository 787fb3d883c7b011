"""Properties of the <memory> marker filter: streaming equals batch for every chunking, and the
visible text never carries a marker."""

from __future__ import annotations

import itertools

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


def stream(deltas: list[str]) -> tuple[list[ParseResult], ParseResult]:
    marker_stream = MarkerStream()
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
