"""The incremental state machine behind :mod:`kairox.memory.markers` (grammar documented there).

It lives apart from the public module because it is tuned for speed: per-delta work is
proportional to the delta, and most deltas take a one-regex path in :meth:`MarkerStream.feed`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from kairox.core.errors import InvalidInput
from kairox.memory._marker_grammar import (
    CLOSE_MAX,
    CLOSE_PATTERN,
    MAX_BODY,
    MAX_TAG,
    OPEN,
    REASON_SELF_CLOSING,
    REASON_UNCLOSED_BODY,
    REASON_UNCLOSED_TAG,
    MemoryMarker,
    ParseResult,
    RejectedMarker,
    judge,
)

_Search = Callable[[str], "re.Match[str] | None"]
_new_result: Callable[
    [type[ParseResult], tuple[str, list[MemoryMarker], list[RejectedMarker]]], ParseResult
] = tuple.__new__

_TEXT, _INLINE, _FENCE, _TAG, _BODY = range(5)
# Where scanning in each mode must stop and look closer.
_TEXT_STOP: Final = re.compile("[<`\n]").search
_INLINE_STOP: Final = re.compile("[`\n]").search
_FENCE_STOP: Final = re.compile("\n").search
_GT_STOP: Final = re.compile(">").search  # an open tag, and a close tag, can only end at a ">"
_CLOSE_SEARCH: Final = CLOSE_PATTERN.search
# feed() releases a delta without scanning when a search finds nothing in it. The *_STOP searches
# prove that the state cannot change. The *_MID ones prove that no tag starts and no line in the
# delta can open or close code (at most 3 spaces, then a fence character or the delta's end), so
# the delta ends mid-line in its mode. The *_LS variants apply when the delta starts a line.
_TEXT_MID: Final = re.compile("[<`]|\n {0,3}(?:~|\\Z)").search
_TEXT_LS: Final = re.compile("[<`]|(?:\\A|\n) {0,3}(?:~|\\Z)").search
_FENCE_MID: Final = re.compile("\n {0,3}(?:[`~]|\\Z)").search
_FENCE_LS: Final = re.compile("(?:\\A|\n) {0,3}(?:[`~]|\\Z)").search
_RUN_END: Final = {"`": re.compile("[^`]").search, "~": re.compile("[^~]").search}
_NON_BLANK: Final = re.compile(r"[^ \t\r\f\v]").search
# The longest prefix of "<memory" at a position (it always matches the "<" there).
_PREFIX: Final = re.compile("<(?:m(?:e(?:m(?:o(?:r(?:y)?)?)?)?)?)?").match
_LINE_START: Final = " `~"  # characters that matter at the start of a line
_OPEN_LEN: Final = len(OPEN)


class MarkerStream:
    """Filters a streamed reply: ``feed`` each delta, then ``close`` once.

    Each call returns only what it newly produced. Plain text is released at once. What is held
    back is text that could still start a tag (a proper prefix of ``<memory``, or two when one of
    them came just before a removed marker) and an open marker's text, at most ``max_tag`` plus
    ``max_body`` characters of it: a marker whose end does not come by then (or before the end of
    the stream) is abandoned, and the text after its opening is released and scanned as text.
    Work per call is proportional to the delta, so a whole reply costs time linear in its length.
    """

    __slots__ = (
        "_body_fast",
        "_closing",
        "_done",
        "_fast",
        "_fast_mid",
        "_fence_char",
        "_fence_len",
        "_held",
        "_limit",
        "_ls",
        "_max_body",
        "_max_tag",
        "_mode",
        "_parts",
        "_pending",
        "_run_char",
        "_run_len",
        "_run_ls",
        "_size",
        "_tag",
        "_ticks",
    )

    def __init__(self, *, max_tag: int = MAX_TAG, max_body: int = MAX_BODY) -> None:
        if max_tag <= _OPEN_LEN or max_body < 1:
            raise InvalidInput(f"max_tag must exceed {_OPEN_LEN} and max_body must be positive")
        self._max_tag = max_tag
        self._max_body = max_body
        self._mode = _TEXT
        self._held = ""  # visible text that may still become "<memory" (TEXT only)
        self._pending = ""  # raw "<memor"-like tail of the last delta, too short to judge yet
        self._ls = 0  # -1 mid-line; else at a line start after this many spaces (0..3)
        self._run_char = ""  # a run of backticks/tildes whose length is not known yet
        self._run_len = 0
        self._run_ls = False  # the run began at a line start: it may open or close a fence
        self._fence_char = ""
        self._fence_len = 0
        self._closing = False  # FENCE: a closing run seen; the line must end blank
        self._ticks = 0  # INLINE: length of the opening backtick run
        self._parts: list[str] = []  # raw text of the open tag or body from earlier deltas
        self._size = 0  # characters in _parts
        self._limit = 0  # TAG/BODY: _size at which the marker is abandoned if still open
        self._tag = ""  # the complete open tag while in BODY
        self._done = False
        # Cheap paths in feed() for a delta that cannot change the state (armed by _scan).
        self._fast: _Search | None = None
        self._fast_mid: _Search | None = _TEXT_LS
        self._body_fast: _Search | None = None

    def feed(self, delta: str) -> ParseResult:
        """Consume the next piece of the reply; return the visible text and markers it completes."""
        fast = self._fast
        if fast is not None and fast(delta) is None:
            return _new_result(ParseResult, (delta, [], []))
        fast = self._fast_mid
        if fast is not None:
            if fast(delta) is None:
                if self._ls == 0:  # the delta started a line and ends mid-line
                    self._ls = -1
                    if self._mode == _TEXT:
                        self._fast, self._fast_mid = _TEXT_STOP, _TEXT_MID
                    else:
                        self._fast, self._fast_mid = _FENCE_STOP, _FENCE_MID
                return _new_result(ParseResult, (delta, [], []))
        else:
            fast = self._body_fast
            if fast is not None and fast(delta) is None and self._size + len(delta) < self._limit:
                if delta:
                    self._parts.append(delta)
                    self._size += len(delta)
                return _new_result(ParseResult, ("", [], []))
        return self._scan(delta)

    def close(self) -> ParseResult:
        """End of stream: abandon an open marker (its text is scanned as text), release held
        text. Idempotent."""
        if self._done:
            return ParseResult("", [], [])
        visible: list[str] = []
        markers: list[MemoryMarker] = []
        rejected: list[RejectedMarker] = []
        while self._mode == _TAG or self._mode == _BODY:
            released = self._abandon(self._mode, self._parts, "", rejected)
            self._mode, self._ls, self._size = _TEXT, -1, 0
            self._fast = self._fast_mid = self._body_fast = None
            result = self._scan(released)
            visible.append(result.visible)
            markers += result.markers
            rejected += result.rejected
        self._done = True
        self._fast = self._fast_mid = self._body_fast = None
        visible.append(self._held + self._pending)
        self._held = self._pending = ""
        return ParseResult("".join(visible), markers, rejected)

    def _abandon(
        self, mode: int, parts: list[str], tail: str, rejected: list[RejectedMarker]
    ) -> str:
        """Give up on the open marker whose text so far is ``parts`` + ``tail``: report its
        opening as rejected and return the text after the opening, to be scanned as text."""
        text = "".join(parts) + tail
        parts.clear()
        if mode == _BODY:
            rejected.append(RejectedMarker(self._tag, REASON_UNCLOSED_BODY))
            self._tag = ""
            return text
        rejected.append(RejectedMarker(text[:_OPEN_LEN], REASON_UNCLOSED_TAG))
        return text[_OPEN_LEN:]

    def _scan(self, delta: str) -> ParseResult:
        if self._done:
            raise InvalidInput("MarkerStream.feed() after close(); use one stream per reply")
        if self._pending:
            buf = self._pending + delta
            self._pending = ""
        else:
            buf = delta
        n = len(buf)
        out: list[str] = []
        markers: list[MemoryMarker] = []
        rejected: list[RejectedMarker] = []
        parts = self._parts
        mode, held, ls, run_len, size = self._mode, self._held, self._ls, self._run_len, self._size
        i = vstart = seg = 0  # seg: where the open tag or body starts in buf
        while i < n:
            if mode == _TEXT:
                if held:
                    c = buf[i]
                    if c == "<":
                        k = _prefix_end(buf, i)
                        mode, held, i, vstart, seg = self._open(buf, i, k, held, out, vstart)
                        continue
                    grown = held + c
                    if OPEN.startswith(grown):
                        i = vstart = i + 1
                        if len(grown) == _OPEN_LEN:  # only after a removed marker: "<mem" + "ory"
                            mode, held, seg = _TAG, "", i
                            parts.append(grown)
                            size = _OPEN_LEN
                        else:
                            held = grown
                    else:
                        out.append(held)
                        held, vstart = "", i
                elif run_len:
                    mode, i, run_len = self._run(buf, i, mode, run_len, None)
                elif ls >= 0:
                    c = buf[i]
                    if c == " ":
                        ls = ls + 1 if ls < 3 else -1
                        i += 1
                    elif c == "`" or c == "~":
                        ls = -1
                        mode, i, run_len = self._run(buf, i, mode, 0, True)
                    else:
                        ls = -1
                else:
                    m = _TEXT_STOP(buf, i)
                    if m is None:
                        break
                    j = m.start()
                    c = buf[j]
                    if c == "\n":
                        i = j + 1
                        ls = 0 if i == n or buf[i] in _LINE_START else -1
                    elif c == "`":
                        if j + 1 < n and buf[j + 1] != "`":  # common case: one backtick
                            mode, i, self._ticks = _INLINE, j + 1, 1
                        else:
                            mode, i, run_len = self._run(buf, j, mode, 0, False)
                    else:
                        m = _PREFIX(buf, j)
                        k = j + 1 if m is None else m.end()
                        if k - j == _OPEN_LEN or k == n or buf[k] == "<":
                            mode, held, i, vstart, seg = self._open(buf, j, k, held, out, vstart)
                        else:  # common case: "<" that is plain text, like "a < b" or "<memo>"
                            i = k
            elif mode == _INLINE:
                if run_len:
                    mode, i, run_len = self._run(buf, i, mode, run_len, None)
                    continue
                m = _INLINE_STOP(buf, i)
                if m is None:
                    break
                j = m.start()
                if buf[j] == "\n":
                    mode, i = _TEXT, j + 1
                    ls = 0 if i == n or buf[i] in _LINE_START else -1
                elif j + 1 < n and buf[j + 1] != "`":  # common case: one backtick
                    if self._ticks == 1:
                        mode = _TEXT
                    i = j + 1
                else:
                    mode, i, run_len = self._run(buf, j, mode, 0, False)
            elif mode == _FENCE:
                if run_len:
                    mode, i, run_len = self._run(buf, i, mode, run_len, None)
                elif ls >= 0:
                    c = buf[i]
                    if c == " ":
                        ls = ls + 1 if ls < 3 else -1
                        i += 1
                    elif c == self._fence_char:
                        ls = -1
                        mode, i, run_len = self._run(buf, i, mode, 0, True)
                    else:
                        ls = -1
                elif self._closing:
                    m = _NON_BLANK(buf, i)
                    if m is None:
                        break
                    j = m.start()
                    self._closing = False
                    if buf[j] == "\n":
                        mode, i = _TEXT, j + 1
                        ls = 0 if i == n or buf[i] in _LINE_START else -1
                    else:
                        i = j
                else:
                    j = buf.find("\n", i)
                    if j < 0:
                        break
                    i = j + 1
                    ls = 0 if i == n or buf[i] in _LINE_START else -1
            elif mode == _TAG:
                stop = seg + self._max_tag - size  # a ">" from here on makes the tag too long
                j = buf.find(">", i, stop)
                if j < 0:
                    if stop > n:
                        break
                    buf = self._abandon(mode, parts, buf[seg:], rejected)
                    mode, ls, size, n, i, vstart = _TEXT, -1, 0, len(buf), 0, 0
                    continue
                tag = "".join(parts) + buf[seg : j + 1]
                parts.clear()
                size = 0
                i = seg = j + 1
                if tag.endswith("/>"):
                    rejected.append(RejectedMarker(tag, REASON_SELF_CLOSING))
                    mode, vstart = _TEXT, i
                else:
                    mode, self._tag = _BODY, tag
            else:
                start = end = -1
                if parts and i == 0:  # a close tag may straddle the previous delta
                    before = _tail(parts, CLOSE_MAX - 1)
                    m = _CLOSE_SEARCH(before + buf[:CLOSE_MAX])
                    if m is not None and m.start() < len(before):
                        start, end = m.start() - len(before), m.end() - len(before)
                if end < 0:
                    # A close that starts past max_body ends before this (or is too late).
                    stop = seg + self._max_body + CLOSE_MAX - 1 - size
                    m = _CLOSE_SEARCH(buf, i, stop)
                    if m is None:
                        if stop > n:
                            break
                        start = stop  # no close in time: abandon below
                    else:
                        start, end = m.span()
                if size + start - seg >= self._max_body:
                    buf = self._abandon(mode, parts, buf[seg:], rejected)
                    mode, ls, size, n, i, vstart = _TEXT, -1, 0, len(buf), 0, 0
                    continue
                verdict = judge(self._tag, "".join(parts) + buf[seg:end], end - start)
                parts.clear()
                size = 0
                if isinstance(verdict, MemoryMarker):
                    markers.append(verdict)
                else:
                    rejected.append(verdict)
                mode, i, vstart, self._tag = _TEXT, end, end, ""
        self._mode, self._held, self._ls, self._run_len = mode, held, ls, run_len
        # Arm the cheap path in feed() for the next delta where plain text cannot change state.
        if mode in (_TAG, _BODY):
            if seg < n:
                parts.append(buf[seg:])
                size += n - seg
            self._size = size
            self._fast = self._fast_mid = None
            self._body_fast = _GT_STOP
            self._limit = self._max_tag if mode == _TAG else self._max_body + CLOSE_MAX - 1
        else:
            self._size = 0
            out.append(buf[vstart:])
            self._body_fast = None
            if run_len or held or self._pending or ls > 0 or self._closing:
                self._fast = self._fast_mid = None
            elif mode == _INLINE:
                self._fast, self._fast_mid = _INLINE_STOP, None
            elif ls == 0:
                self._fast, self._fast_mid = None, _TEXT_LS if mode == _TEXT else _FENCE_LS
            elif mode == _TEXT:
                self._fast, self._fast_mid = _TEXT_STOP, _TEXT_MID
            else:
                self._fast, self._fast_mid = _FENCE_STOP, _FENCE_MID
        return _new_result(ParseResult, ("".join(out), markers, rejected))

    def _run(
        self, buf: str, i: int, mode: int, run_len: int, at_line_start: bool | None
    ) -> tuple[int, int, int]:
        """Count the backtick/tilde run at ``buf[i]``; once it ends, act on it.

        ``at_line_start`` is None when continuing a run from the previous delta. Returns
        (mode, next index, run length still open or 0).
        """
        if at_line_start is not None:
            self._run_char, self._run_ls = buf[i], at_line_start
        char = self._run_char
        m = _RUN_END[char](buf, i)
        j = len(buf) if m is None else m.start()
        run_len += j - i
        if j == len(buf):
            return mode, j, run_len
        if mode == _TEXT:
            if self._run_ls and run_len >= 3:
                mode, self._fence_char, self._fence_len = _FENCE, char, run_len
            elif char == "`":
                mode, self._ticks = _INLINE, run_len
        elif mode == _INLINE:
            if run_len == self._ticks:
                mode = _TEXT
        elif self._run_ls and char == self._fence_char and run_len >= self._fence_len:
            self._closing = True
        return mode, j, 0

    def _open(
        self, buf: str, i: int, k: int, held: str, out: list[str], vstart: int
    ) -> tuple[int, str, int, int, int]:
        """Handle a ``<`` at ``buf[i]`` in plain text, ``buf[i:k]`` being the longest prefix of
        ``<memory`` there; return (mode, held, i, vstart, seg)."""
        if k - i == _OPEN_LEN:
            out.append(buf[vstart:i])
            return _TAG, held, k, i, i
        if k == len(buf):  # too short to tell yet
            out.append(buf[vstart:i])
            self._pending = buf[i:]
            return _TEXT, held, k, k, 0
        if held:
            out.append(held)
        if buf[k] == "<":  # a marker may start at k: keep "<mem" in case "ory" follows it
            out.append(buf[vstart:i])
            return _TEXT, buf[i:k], k, k, 0
        return _TEXT, "", k, vstart, 0


def _prefix_end(buf: str, i: int) -> int:
    match = _PREFIX(buf, i)
    return i + 1 if match is None else match.end()


def _tail(parts: list[str], size: int) -> str:
    """The last ``size`` characters of ``"".join(parts)``, without joining everything."""
    tail = ""
    for part in reversed(parts):
        tail = part + tail
        if len(tail) >= size:
            break
    return tail[-size:]
