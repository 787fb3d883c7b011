"""The in-memory BM25 engine: the scores of a reference implementation (bm25s's Lucene method and
a plain multi-field BM25 written here), and incremental updates that equal a rebuild."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kairox.retrieval.bm25 import KeywordIndex
from kairox.store.terms import QueryStemmer
from kairox.store.words import words

STEMMER = QueryStemmer()

CORPUS = [
    "The cats are running after the mice in the garden",
    "A dog runs; dogs bark at cats.",
    "Garden party: tea, cakes and running jokes",
    "Mice hide from cats and dogs",
    "Running shoes for the marathon runner",
    "café naïve résumé: diacritics fold like FTS5",
    "x²+y² = z², path/to/file_name.py",
]


def tokens(text: str) -> list[str]:
    """The terms of a text as FTS5's porter tokenizer makes them."""
    found = STEMMER.tokens(words(text))
    return [t for w in words(text) for t in found[w]]


def reference(
    docs: Sequence[Sequence[str]], weights: Sequence[float], query: Sequence[str]
) -> list[float]:
    """Multi-field BM25 as FTS5's ``bm25()`` computes it, with Lucene's IDF over ``docs``."""
    k1, b = 1.2, 0.75
    fields = [[Counter(tokens(text)) for text in doc] for doc in docs]
    lengths = [sum(sum(c.values()) for c in doc) for doc in fields]
    average = sum(lengths) / len(docs)
    scores = []
    for doc, length in zip(fields, lengths, strict=True):
        score = 0.0
        for term in query:
            df = sum(1 for d in fields if any(term in c for c in d))
            if not df:
                continue
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            tf = sum(w * c[term] for w, c in zip(weights, doc, strict=True))
            if tf:
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
        scores.append(score)
    return scores


def ranked(scores: Sequence[float], ids: Sequence[int]) -> list[tuple[int, float]]:
    pairs = [(i, s) for i, s in zip(ids, scores, strict=True) if s > 0]
    return sorted(pairs, key=lambda p: (-p[1], p[0]))


def assert_same(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-6)


@pytest.mark.parametrize(
    "query", ["cats running", "garden mice dog", "runner", "cafe naive", "file name py", "zebra"]
)
def test_single_field_scores_equal_bm25s_lucene(query: str) -> None:
    index = KeywordIndex((1.0,), stemmer=STEMMER)
    index.add([(i + 1, (text,)) for i, text in enumerate(CORPUS)])
    terms = index.stems(words(query))
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index([tokens(text) for text in CORPUS], show_progress=False)
    # bm25s's Lucene form leaves out BM25's constant (k1 + 1) factor, which FTS5 keeps.
    expected = retriever.get_scores(terms) * 2.2
    assert_same(index.search(terms, 10), ranked(expected.tolist(), range(1, len(CORPUS) + 1)))


def test_field_weights_follow_fts5_bm25() -> None:
    docs = [(f"src/{i}.py", text, CORPUS[i - 1]) for i, text in enumerate(CORPUS)]
    weights = (0.5, 1.0, 0.3)
    index = KeywordIndex(weights, stemmer=STEMMER)
    index.add([(10 * i, doc) for i, doc in enumerate(docs)])
    for query in ["cats running", "src py garden", "mice"]:
        terms = index.stems(words(query))
        want = ranked(reference(docs, weights, terms), [10 * i for i in range(len(docs))])
        assert_same(index.search(terms, 5), want[:5])


def test_idf_never_reaches_zero_and_ties_rank_by_id() -> None:
    index = KeywordIndex(stemmer=STEMMER)
    index.add([(7, ("same words",)), (3, ("same words",)), (5, ("same words",))])
    hits = index.search(index.stems(["same"]), 10)
    assert [i for i, _ in hits] == [3, 5, 7]
    assert hits[0][1] > 0  # a word in every document still counts
    assert index.document_frequencies(["same", "absent"]) == {"same": 3, "absent": 0}


def test_a_replaced_document_is_scored_by_its_new_text() -> None:
    index = KeywordIndex(stemmer=STEMMER)
    index.add([(1, ("old text about cats",)), (2, ("dogs",))])
    index.add([(1, ("new text about birds",))])
    assert len(index) == 2
    assert index.search(index.stems(["cats"]), 10) == []
    assert [i for i, _ in index.search(index.stems(["birds"]), 10)] == [1]


def rebuilt(live: dict[int, tuple[str, str]]) -> KeywordIndex:
    fresh = KeywordIndex((0.5, 1.0), stemmer=STEMMER)
    fresh.add(sorted(live.items()))
    return fresh


WORDS = ["alpha", "beta", "gamma", "delta", "running", "runs", "cat", "cats", "zeta", "eta"]
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
# each step adds (or replaces) a batch of documents, then removes some ids
step = st.tuples(
    st.lists(st.tuples(st.integers(1, 30), texts, texts), max_size=6),
    st.lists(st.integers(1, 30), max_size=6),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(step, min_size=1, max_size=12), st.lists(st.sampled_from(WORDS), max_size=4))
def test_incremental_updates_equal_a_rebuild(
    steps: list[tuple[list[tuple[int, str, str]], list[int]]], query: list[str]
) -> None:
    index = KeywordIndex((0.5, 1.0), stemmer=STEMMER, compact_min=3)
    live: dict[int, tuple[str, str]] = {}
    for adds, removes in steps:
        batch = [(i, (a, b)) for i, a, b in adds]
        index.add(batch)
        live.update(batch)
        index.remove(removes)
        for i in removes:
            live.pop(i, None)
    fresh = rebuilt(live)
    terms = index.stems(query)
    assert len(index) == len(live)
    assert_same(index.search(terms, 10), fresh.search(terms, 10))
    assert index.document_frequencies(terms) == fresh.document_frequencies(terms)


def test_many_small_appends_merge_into_few_segments() -> None:
    rng = np.random.default_rng(3)
    index = KeywordIndex(stemmer=STEMMER)
    live = {}
    for i in range(1, 600):
        text = " ".join(rng.choice(WORDS, 5))
        index.add([(i, (text,))])
        live[i] = (text,)
    assert len(index._segments) <= 12  # log2 of the appends, not one per append
    fresh = KeywordIndex(stemmer=STEMMER)
    fresh.add(sorted(live.items()))
    terms = index.stems(["cats", "zeta"])
    assert_same(index.search(terms, 50), fresh.search(terms, 50))


def test_uncounted_fields_score_but_leave_document_frequencies_alone() -> None:
    """The history index's context field (the turn before) scores a unit but does not make a
    word look common: its document frequency counts the units that say the word themselves."""
    docs = [
        (1, ("deploy on fridays", "")),
        (2, ("lunch at noon", "deploy on fridays")),
        (3, ("roll back the deploy", "lunch at noon")),
        (4, ("office closed", "roll back the deploy")),
    ]
    counted = KeywordIndex((1.0, 0.3), counted=(True, False))
    counted.add(docs[:2])
    counted.add(docs[2:])  # two segments, merged or not: the same statistics
    every = KeywordIndex((1.0, 0.3))
    every.add(docs)
    (deploy,) = counted.stems(["deploy"])
    assert counted.document_frequencies([deploy]) == {deploy: 2}
    assert every.document_frequencies([deploy]) == {deploy: 4}
    hits = dict(counted.search([deploy], 10))
    assert set(hits) == {1, 2, 3, 4} and min(hits[1], hits[3]) > max(hits[2], hits[4])
    assert hits[1] > dict(every.search([deploy], 10))[1]  # a rarer word weighs more
    counted.remove([1])
    assert counted.document_frequencies([deploy]) == {deploy: 1}


def test_few_postings_in_a_large_index_score_as_the_dense_sum() -> None:
    """A query whose words are in few documents sums its postings alone; the scores equal the
    reference's, ties included."""
    filler = [f"filler{i} text{i % 7}" for i in range(400)]
    docs = [*filler, "cats running", "running cats again", "dogs", "cats dogs running"]
    index = KeywordIndex(stemmer=STEMMER)
    index.add([(i + 1, (text,)) for i, text in enumerate(docs)])
    for query in ["cats running", "dogs cats", "running zebra text3"]:
        terms = index.stems(words(query))
        want = ranked(reference([(t,) for t in docs], (1.0,), terms), range(1, len(docs) + 1))
        assert_same(index.search(terms, 10), want[:10])


def test_stemmer_keeps_cached_words_when_its_cache_is_cleared() -> None:
    """A call mixing cached words with new ones, at the moment the full cache is cleared, still
    stems every word (it raised KeyError on the cached ones at 1M chunks)."""
    from kairox.store.terms import QueryStemmer

    stemmer = QueryStemmer()
    assert stemmer.stems(["running"]) == ["run"]
    stemmer.tokens(f"w{i}x" for i in range(50_001))
    assert stemmer.stems(["running", "jumped"]) == ["run", "jump"]
