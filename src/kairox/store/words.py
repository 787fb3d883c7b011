"""The one word splitter of every lexical path: keyword indexes (index and query), history recall,
memory search, the hashing embedder, readable keys, the local knowledge bases and the relevance
evidence all split text here, so a text gives the same terms when it is indexed and when it is
searched for.

Words are runs of letters and digits (``_`` separates), lower-cased. Chinese, Japanese and Korean
write no spaces between words, so a run of Han, Hiragana, Katakana or Hangul becomes overlapping
character bigrams (Lucene's ``CJKAnalyzer``): ``数据库`` is ``数据 据库``, and a lone
character stays a unigram. On CMRC 2018 dev (Chinese Wikipedia) bigrams rank as well as ``jieba``
words (nDCG@10 0.984 both, with ``bm25s``) with no dictionary and no dependency. Other scripts are
words, which the store's stemmer then stems (``kairox.store.terms``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Han (with the CJK symbols 々〆〇 and the Hangzhou numerals), Hiragana and Katakana (their
# letters and iteration marks, not the combining sound marks, ゠ or ・), the Katakana phonetic
# extensions and half-width forms, Hangul syllables and jamo, and the Han supplementary planes.
_CJK_RANGES = (
    "\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c\u3041-\u3096"
    "\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7fb\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
_CJK = re.compile(f"[{_CJK_RANGES}]")
# A CJK run, or a run of the other letters and digits.
_RUN = re.compile(f"[{_CJK_RANGES}]+|[^\\W_{_CJK_RANGES}]+")
_ASCII_WORDS = bytes(c if chr(c).isalnum() or c >= 128 else 32 for c in range(256))
# A word character that is not CJK: what a non-CJK word may not touch to be whole.
_OTHER = f"[^\\W_{_CJK_RANGES}]"


def normalise(text: str) -> str:
    """``text`` in NFKC (full-width Latin and half-width Katakana become their usual forms), so
    ``ＳＱＬ`` and ``SQL`` are one word. ASCII text is returned as it is."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def runs(text: str) -> list[str]:
    """The runs of ``text`` as written (case kept): CJK runs and runs of other letters and
    digits, in order. What ``readable_key`` keeps of a key."""
    return _RUN.findall(normalise(text))


def words(text: str) -> list[str]:
    """The terms of ``text``, in order: lower-cased words, CJK runs as character bigrams."""
    if text.isascii():  # the common case, several times faster than the regex
        return text.lower().encode().translate(_ASCII_WORDS).decode().split()
    out: list[str] = []
    for run in _RUN.findall(unicodedata.normalize("NFKC", text)):
        if _CJK.match(run):
            if len(run) == 1:
                out.append(run)
            else:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            lowered = run.lower()  # "İ" lowers to "i" and a combining dot, which is no letter
            out.append(lowered if lowered.isalnum() else "".join(filter(str.isalnum, lowered)))
    return out


@dataclass(frozen=True, slots=True)
class TermLookup:
    """Which terms a text holds, without listing its CJK bigrams (a paragraph of Chinese has
    hundreds): what scoring a hit against a query's few terms needs. ``others`` are its
    non-CJK words (as ``words`` gives them), ``lone`` its one-character CJK runs."""

    text: str
    others: list[str]
    lone: frozenset[str]

    def has_cjk(self, term: str) -> bool:
        """Whether the CJK ``term`` is one of the text's terms: a bigram is one exactly when
        its two characters stand side by side (they are then in one CJK run)."""
        return term in self.lone if len(term) == 1 else term in self.text


def lookup(text: str) -> TermLookup:
    """The ``TermLookup`` of ``text``."""
    if text.isascii():
        return TermLookup(text, words(text), frozenset())
    normal = unicodedata.normalize("NFKC", text)
    others: list[str] = []
    lone: set[str] = set()
    for run in _RUN.findall(normal):
        if not _CJK.match(run):
            others.extend(words(run))
        elif len(run) == 1:
            lone.add(run)
    return TermLookup(normal, others, frozenset(lone))


def is_cjk(term: str) -> bool:
    """Whether ``term`` is a CJK unigram or bigram (no stemmer rewrites it)."""
    return bool(_CJK.match(term))


def phrase_pattern(query: str) -> re.Pattern[str] | None:
    """A pattern finding ``query`` as typed inside a text (case aside): its runs in order, with
    only punctuation or spaces between them, each non-CJK word whole, so ``CI`` finds ``CI`` and
    ``ci.yml`` but not ``city``, and ``数据库`` finds ``PostgreSQL数据库``. None for a query with no
    words. Apply it to ``normalise(text)``."""
    parts = runs(query)
    if not parts:
        return None
    body = r"[\W_]*".join(re.escape(p) for p in parts)
    head = "" if _CJK.match(parts[0]) else f"(?<!{_OTHER})"
    tail = "" if _CJK.match(parts[-1][-1]) else f"(?!{_OTHER})"
    return re.compile(head + body + tail, re.IGNORECASE)


def contains_phrase(text: str, query: str) -> bool:
    """Whether ``text`` holds ``query`` as typed (``phrase_pattern``)."""
    pattern = phrase_pattern(query)
    return pattern is not None and pattern.search(normalise(text)) is not None
