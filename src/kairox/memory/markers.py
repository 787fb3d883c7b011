"""The ``<memory>`` marker protocol: pull memory proposals out of a model reply, streamed or whole.

One incremental state machine, :class:`MarkerStream`, does all the work. The batch functions feed
it the whole text once and close it, so streamed and batch results can never disagree.

Grammar and decisions (DESIGN §3):

* A marker is ``<memory ATTRS>body</memory>``. Names are case-sensitive lowercase. ``ATTRS`` are
  ``scope`` and ``key`` in any order, each ``name = "value"`` or ``name = 'value'`` with any
  spaces; values cannot contain ``>`` and are trimmed.
* Any ``<memory`` in plain text starts a marker; its open tag ends at the first ``>``, and may span
  lines (``<memory\n  scope="workspace"\n  key="k">``). Near misses that never spell ``<memory``
  (``<memo``, ``<memorable>``, a stray ``</memory>``, ``<Memory>``) are plain text.
* The body ends at the first close tag, ``</memory>`` with up to 16 whitespace characters before
  its ``>`` (``</memory >`` closes). No nesting: a body containing ``<memory`` is rejected.
* Markers never eat text. An open tag with no ``>`` within ``MAX_TAG`` characters, or a body whose
  close tag does not start within ``MAX_BODY`` characters, or either one still open at the end of
  the stream, is abandoned: ``<memory`` (or the whole open tag) is rejected as ``unclosed`` and
  everything after it is scanned again as plain text, so it shows (and may hold later markers).
* A malformed tag (unquoted value, unknown or duplicate attribute, ...), a missing or unknown
  scope, or a user/workspace marker without a key is rejected with a one-line reason, body and all.
  A self-closing ``<memory .../>`` is rejected and has no body. An empty or blank body is rejected
  as ``empty``, whatever the tag says.
* Code is text: a fence opens at a line that starts (after at most 3 spaces) with 3+ backticks or
  tildes, and closes at a line holding only the same character, at least as many times. Inline
  code opens at a run of N backticks and ends at the next run of exactly N backticks, or at the end
  of the line (an unmatched backtick makes the rest of its line code). Markers never open inside
  code, and code is not tracked inside a marker body. Indented code blocks are not recognised.
* Removing a marker never lets ``<memory`` appear in the visible text: text such as ``<mem`` just
  before a marker is matched against what follows the marker, so ``<mem`` + marker + ``ory ...``
  starts a marker too. Rejected markers never show in the visible text.
* Nothing is lost: the visible text, the markers' ``raw`` text and the rejected ``raw`` text
  together hold every character of the reply exactly once (property-tested).
"""

from __future__ import annotations

from kairox.memory._marker_grammar import MemoryMarker, ParseResult, RejectedMarker
from kairox.memory._marker_stream import MarkerStream

__all__ = [
    "MarkerStream",
    "MemoryMarker",
    "ParseResult",
    "RejectedMarker",
    "extract_memory_markers",
    "parse_memory_markers",
    "strip_memory_markers",
]


def parse_memory_markers(text: str) -> ParseResult:
    """Visible text, valid markers and rejected markers of a complete reply."""
    stream = MarkerStream()
    head = stream.feed(text)
    tail = stream.close()
    return ParseResult(
        head.visible + tail.visible, head.markers + tail.markers, head.rejected + tail.rejected
    )


def extract_memory_markers(text: str) -> list[MemoryMarker]:
    """The valid memory proposals in a complete reply, in order."""
    return parse_memory_markers(text).markers


def strip_memory_markers(text: str) -> str:
    """A complete reply with every marker (valid or rejected) removed; an unclosed marker's
    opening is removed and the text after it kept."""
    return parse_memory_markers(text).visible
