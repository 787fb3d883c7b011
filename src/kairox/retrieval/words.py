"""Words of a text, as the keyword side and lexical evidence split them.

Its own module, free of NumPy, so that scoring a hit's words (``kairox.retrieval.relevance``)
does not load the in-memory index on commands that never search (``kairox memory list``).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+")
_ASCII_WORDS = bytes(c if chr(c).isalnum() or c >= 128 else 32 for c in range(256))


def words(text: str) -> list[str]:
    """The lower-cased words of ``text``: runs of letters and digits (``_`` separates)."""
    lowered = text.lower()
    if lowered.isascii():  # the common case, several times faster than the regex
        return lowered.encode().translate(_ASCII_WORDS).decode().split()
    return _WORD.findall(lowered)
