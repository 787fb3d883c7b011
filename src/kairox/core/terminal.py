"""Text from the model, files or the store, made safe to print on a terminal.

A reply or a memory body can carry terminal escapes (OSC 52 writes the clipboard, OSC 8 hides a
link), a carriage return that overwrites what was printed, or bidi controls that make text read
differently from what it is. Surfaces print such text through ``visible``: every control
character is shown as its escape (``\\x1b``, ``\\r``, ``\\u202e``) instead of being obeyed.
JSON output goes through ``json_escaped`` so it keeps them escaped too.
"""

from __future__ import annotations

from kairox.core.names import BIDI_CONTROLS

_OTHER = ("\u2028", "\u2029", "\ufeff")  # line and paragraph separators, a stray BOM


def _escape(code: int) -> str:
    if code == 0x0D:
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _table(*, keep: str) -> dict[int, str]:
    codes = [*range(0x20), 0x7F, *range(0x80, 0xA0), *map(ord, BIDI_CONTROLS), *map(ord, _OTHER)]
    return {code: _escape(code) for code in codes if chr(code) not in keep}


_MULTILINE = _table(keep="\n\t")
_ONE_LINE = {**_table(keep="\t"), ord("\n"): "\\n"}
# In JSON, C0 controls are already escaped by the encoder; these are not (ensure_ascii=False).
_JSON = {
    code: f"\\u{code:04x}"
    for code in (0x7F, *range(0x80, 0xA0), *map(ord, BIDI_CONTROLS), *map(ord, _OTHER))
}


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with control characters shown, not obeyed. Newlines and tabs stay, unless
    ``one_line`` (a table cell, where a newline would forge a row)."""
    return text.translate(_ONE_LINE if one_line else _MULTILINE)


def json_escaped(dumped: str) -> str:
    """A ``json.dumps(..., ensure_ascii=False)`` result with the characters a terminal would
    obey (DEL, C1 controls, bidi controls, line separators) written as ``\\uXXXX`` escapes.
    Those characters only occur inside JSON strings, so the document means the same."""
    return dumped.translate(_JSON)
