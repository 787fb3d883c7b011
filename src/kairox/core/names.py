"""Names users and models choose (session names, memory keys): printable, one line, bounded.

A newline forges a row in a listing, NUL truncates in C libraries, and bidi controls make a
name read differently from what it is. The facade checks every name from every surface here.
"""

from __future__ import annotations

import unicodedata

from kairox.core.errors import InvalidInput

MAX_NAME_CHARS = 200
# Explicit bidirectional formatting characters (Trojan Source, CVE-2021-42574).
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def check_name(value: str, *, what: str) -> str:
    """``value`` unchanged if acceptable, else ``InvalidInput`` saying what is wrong."""
    if not value.strip():
        raise InvalidInput(f"{what} cannot be empty")
    if len(value) > MAX_NAME_CHARS:
        raise InvalidInput(f"{what} is {len(value)} characters; the limit is {MAX_NAME_CHARS}")
    if value.isascii() and value.isprintable():  # the common case: no ASCII char is Cf/Zl/Zp
        return value
    for index, char in enumerate(value):
        if char in BIDI_CONTROLS:
            raise InvalidInput(
                f"{what} contains a bidirectional control character (U+{ord(char):04X}) "
                f"at position {index}; use printable characters only"
            )
        if not char.isprintable() or unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            raise InvalidInput(
                f"{what} contains a control character (U+{ord(char):04X}) at position {index}; "
                "use printable characters only"
            )
    return value


def check_session_name(value: str) -> str:
    """A session name: a name (``check_name``) without leading or trailing whitespace, which
    would look identical to another session's name in every listing."""
    check_name(value, what="a session name")
    if value != value.strip():
        raise InvalidInput(
            f"a session name cannot start or end with whitespace ('{value}'); use '{value.strip()}'"
        )
    return value


def check_prompt(text: str) -> str:
    """A prompt must say something: empty and whitespace-only prompts are refused."""
    if not text.strip():
        raise InvalidInput("the prompt is empty; type a message to send")
    return text


def check_utf8_args(args: list[str]) -> None:
    """Arguments the OS gave as undecodable bytes (surrogate escapes) are refused up front,
    before anything is created."""
    for index, arg in enumerate(args, start=1):
        bad = next((c for c in arg if "\udc80" <= c <= "\udcff"), None)
        if bad is not None:
            raise InvalidInput(
                f"argument {index} is not valid UTF-8 (byte 0x{ord(bad) - 0xDC00:02X}); "
                "pass text in UTF-8"
            )
