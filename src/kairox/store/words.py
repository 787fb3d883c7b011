"""The one word splitter of every lexical path: keyword indexes (index and query), history recall,
memory search, the hashing embedder, readable keys, the local knowledge bases and the relevance
evidence all split text here, so a text gives the same terms when it is indexed and when it is
searched for.

Words are runs of letters and digits (``_`` separates), lower-cased. Chinese, Japanese and Korean
write no spaces between words, so a run of Han, Hiragana, Katakana or Hangul becomes overlapping
character bigrams (Lucene's ``CJKAnalyzer``): ``数据库`` is ``数据 据库``, and a lone
character stays a unigram. On CMRC 2018 dev (Chinese Wikipedia) bigrams rank as well as ``jieba``
words (nDCG@10 0.984 both, with ``bm25s``) with no dictionary and no dependency. Thai, Lao,
Myanmar and Khmer are written without spaces too: a run of them becomes overlapping bigrams of
character clusters (a letter with its combining marks), so ``ข้าวผัด`` is ``ข้า าว วผั ผัด``.
Other scripts are words, combining marks included (the vowel signs of ``हिंदी`` belong to it)
but for the optional points of Arabic and Hebrew, which the store's stemmer then stems
(``kairox.store.terms``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from kairox.store._unicode_classes import MARKS, UNSPACED

# Han (with the CJK symbols 々〆〇 and the Hangzhou numerals), Hiragana and Katakana (their
# letters and iteration marks, not the combining sound marks, ゠ or ・), the Katakana phonetic
# extensions and half-width forms, Hangul syllables and jamo, and the Han supplementary planes.
_CJK_RANGES = (
    "\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c\u3041-\u3096"
    "\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7fb\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
# A word character that is neither CJK nor of an unspaced script, or a combining mark: what a
# word is made of, and what a word may not touch to be whole.
_OTHER = f"(?:[^\\W_{_CJK_RANGES}{UNSPACED}]|[{MARKS}])"


class _Patterns:
    """The patterns of non-ASCII text, compiled on its first use (a process that splits only
    ASCII never pays for the big classes)."""

    def __init__(self) -> None:
        self.cjk = re.compile(f"[{_CJK_RANGES}]")
        self.unspaced = re.compile(f"[{UNSPACED}]")
        self.ngram = re.compile(f"[{_CJK_RANGES}{UNSPACED}]")
        # A CJK run, a run of an unspaced script, or a word.
        self.run = re.compile(f"[{_CJK_RANGES}]+|[{UNSPACED}]+|{_OTHER}+")
        # A character cluster: a character and the combining marks after it.
        self.cluster = re.compile(f".[{MARKS}]*", re.DOTALL)
        self.mark = re.compile(f"[{MARKS}]")
        # The vowel points and cantillation of Hebrew and the harakat of Arabic: written or
        # left out at will, so a word is found with or without them.
        self.points = re.compile("[\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed]")


@functools.cache
def _p() -> _Patterns:
    return _Patterns()


_ASCII_WORDS = bytes(c if chr(c).isalnum() or c >= 128 else 32 for c in range(256))


TERMS_VERSION = 3
"""The version of the splitting: 1 words, 2 CJK bigrams, 3 words with their combining marks and
cluster bigrams for Thai, Lao, Myanmar and Khmer. An index kept outside the home's database (a
``tantivy`` knowledge base) made at another version is rebuilt from its stored passages."""


def normalise(text: str) -> str:
    """``text`` in NFKC (full-width Latin and half-width Katakana become their usual forms), so
    ``ＳＱＬ`` and ``SQL`` are one word. ASCII text is returned as it is."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def runs(text: str) -> list[str]:
    """The runs of ``text`` as written (case kept): CJK runs and runs of other letters and
    digits, in order. What ``readable_key`` keeps of a key."""
    return _p().run.findall(normalise(text))


def words(text: str) -> list[str]:
    """The terms of ``text``, in order: lower-cased words, CJK runs as character bigrams."""
    if text.isascii():  # the common case, several times faster than the regex
        return text.lower().encode().translate(_ASCII_WORDS).decode().split()
    out: list[str] = []
    for run in _p().run.findall(unicodedata.normalize("NFKC", text)):
        if _p().cjk.match(run):
            if len(run) == 1:
                out.append(run)
            else:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
        elif _p().unspaced.match(run):
            out.extend(_cluster_bigrams(run))
        else:
            lowered = run.lower()
            word = lowered if lowered.isalnum() else _word(lowered)
            if word:  # a stray mark is no word
                out.append(word)
    return out


def _cluster_bigrams(run: str) -> list[str]:
    """A run of an unspaced script as overlapping bigrams of its character clusters."""
    clusters = [c for c in _p().cluster.findall(run) if not _p().mark.match(c)]  # no stray marks
    if len(clusters) <= 1:
        return clusters
    return [clusters[i] + clusters[i + 1] for i in range(len(clusters) - 1)]


def _word(lowered: str) -> str:
    """A lower-cased word's letters, digits and the combining marks of its non-Latin letters.
    A mark after an ASCII letter goes ("İ" lowers to "i" and a combining dot, and ``İstanbul``
    is found as ``istanbul``), and so do Arabic and Hebrew points."""
    kept: list[str] = []
    for ch in lowered:
        mark = _p().mark.match(ch) and kept and not kept[-1].isascii() and not _p().points.match(ch)
        if ch.isalnum() or mark:
            kept.append(ch)
    return "".join(kept)


@dataclass(frozen=True, slots=True)
class TermLookup:
    """Which terms a text holds, without listing its CJK bigrams (a paragraph of Chinese has
    hundreds): what scoring a hit against a query's few terms needs. ``others`` are its words
    (as ``words`` gives them); ``exact`` its one-character CJK runs and the cluster bigrams of
    its Thai, Lao, Myanmar and Khmer runs."""

    text: str
    others: list[str]
    exact: frozenset[str]

    def has_ngram(self, term: str) -> bool:
        """Whether the n-gram ``term`` (``is_ngram``) is one of the text's terms: a CJK bigram
        is one exactly when its two characters stand side by side (they are then in one CJK
        run)."""
        if len(term) == 2 and _p().cjk.fullmatch(term[0]) and _p().cjk.fullmatch(term[1]):
            return term in self.text
        return term in self.exact


def lookup(text: str) -> TermLookup:
    """The ``TermLookup`` of ``text``."""
    if text.isascii():
        return TermLookup(text, words(text), frozenset())
    normal = unicodedata.normalize("NFKC", text)
    others: list[str] = []
    exact: set[str] = set()
    for run in _p().run.findall(normal):
        if _p().unspaced.match(run):
            exact.update(_cluster_bigrams(run))
        elif not _p().cjk.match(run):
            others.extend(words(run))
        elif len(run) == 1:
            exact.add(run)
    return TermLookup(normal, others, frozenset(exact))


def is_ngram(term: str) -> bool:
    """Whether ``term`` is a character n-gram, not a word: a CJK unigram or bigram, or a cluster
    bigram of an unspaced script (no stemmer rewrites it)."""
    return not term.isascii() and bool(_p().ngram.match(term))


def keeps_form(term: str) -> bool:
    """Whether a stemmer must leave ``term`` as it is: an n-gram (``is_ngram``), or a word with
    combining marks, which FTS5's ``unicode61`` would cut at its marks (``हिंदी`` into ``ह द``)."""
    if term.isascii():
        return False
    patterns = _p()
    return bool(patterns.ngram.match(term) or patterns.mark.search(term))


def phrase_pattern(query: str) -> re.Pattern[str] | None:
    """A pattern finding ``query`` as typed inside a text (case aside): its runs in order, with
    only punctuation or spaces between them, each word whole, so ``CI`` finds ``CI`` and
    ``ci.yml`` but not ``city``; a CJK or Thai run need not be whole, so ``数据库`` finds
    ``PostgreSQL数据库``. None for a query with no
    words. Apply it to ``normalise(text)``."""
    parts = runs(query)
    if not parts:
        return None
    body = r"[\W_]*".join(re.escape(p) for p in parts)
    head = "" if _p().ngram.match(parts[0]) else f"(?<!{_OTHER})"
    tail = "" if _p().ngram.match(parts[-1][-1]) else f"(?!{_OTHER})"
    return re.compile(head + body + tail, re.IGNORECASE)


def contains_phrase(text: str, query: str) -> bool:
    """Whether ``text`` holds ``query`` as typed (``phrase_pattern``)."""
    pattern = phrase_pattern(query)
    return pattern is not None and pattern.search(normalise(text)) is not None
