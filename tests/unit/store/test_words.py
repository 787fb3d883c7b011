"""The one word splitter (``kairox.store.words``): CJK runs as bigrams, other scripts as words,
the same terms for a text wherever it is split; the stemmer survives a big vocabulary."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kairox.retrieval.bm25 import KeywordIndex
from kairox.retrieval.knowledge_bases._documents import query_terms as kb_query_terms
from kairox.retrieval.relevance import LexicalEvidence
from kairox.retrieval.search import query_terms
from kairox.store import terms
from kairox.store.records import MemoryUnit, readable_key
from kairox.store.terms import QueryStemmer
from kairox.store.words import contains_phrase, is_cjk, lookup, words


def test_cjk_runs_become_overlapping_bigrams_and_a_lone_character_a_unigram() -> None:
    assert words("我们用什么数据库") == ["我们", "们用", "用什", "什么", "么数", "数据", "据库"]
    assert words("猫。狗") == ["猫", "狗"]
    assert words("PostgreSQL数据库") == ["postgresql", "数据", "据库"]
    assert words("我们的项目使用 PostgreSQL 17 数据库")[-4:] == ["postgresql", "17", "数据", "据库"]


def test_japanese_and_korean() -> None:
    assert words("データベースはPostgreSQLです") == [
        "デー", "ータ", "タベ", "ベー", "ース", "スは", "postgresql", "です",
    ]  # fmt: skip
    assert words("우리는 데이터베이스를") == [
        "우리",
        "리는",
        "데이",
        "이터",
        "터베",
        "베이",
        "이스",
        "스를",
    ]


def test_width_and_case_forms_are_one_word() -> None:
    assert words("ＰｏｓｔｇｒｅＳＱＬ") == ["postgresql"]
    assert words("ｶﾀｶﾅ") == words("カタカナ")
    # Every path splits İstanbul alike (two splitters used to disagree on it).
    assert words("İstanbul") == kb_query_terms("İstanbul") == query_terms("İstanbul")


def test_readable_key_keeps_cjk_and_splits_scripts() -> None:
    assert readable_key("项目.数据库") == "项目 数据库"
    assert readable_key("db.PostgreSQL数据库") == "db Postgre SQL 数据库"


def test_a_phrase_is_whole_words_or_cjk_characters_in_a_row() -> None:
    assert not contains_phrase("Our city is large", "CI")
    assert contains_phrase("Our CI runs on ci.yml", "CI")
    assert contains_phrase("我们的项目使用 PostgreSQL数据库", "数据库")
    assert contains_phrase("PostgreSQL数据库", "postgresql")
    assert not contains_phrase("PostgreSQLx", "postgresql")
    assert contains_phrase("the db.engine key", "db engine")


def test_the_stemmer_keeps_answering_past_its_cache_limit() -> None:
    stemmer = QueryStemmer()
    vocabulary = [f"w{i}x" for i in range(70_000)]
    assert len(stemmer.tokens(vocabulary)) == 70_000
    # Words cached before, read with new ones once the cache is past its limit: KeyError today.
    found = stemmer.tokens(["w1x", "deploy", "topic", "w69999x"])
    assert found["deploy"] == ("deploi",) and found["w1x"] == ("w1x",)
    assert stemmer.stems(["w2x", "deploying"]) == ["w2x", "deploi"]
    assert len(stemmer._cache) <= terms.CACHE_LIMIT + 70_000


_CJK = st.sampled_from("数据库我们项目使用的猫叫小橘データベースはです우리데이터")
_LATIN = st.sampled_from("abcdeistuvxyzİéß0123 .,_-")
_TEXT = st.lists(st.one_of(_CJK, _LATIN), min_size=1, max_size=40).map("".join)


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_a_text_finds_itself_through_the_keyword_index(text: str) -> None:
    """Index-time and query-time terms are the same: a text searched for by itself is found,
    and its lexical evidence is complete."""
    stemmer = QueryStemmer()
    index = KeywordIndex(stemmer=stemmer)
    index.add([(1, (text,)), (2, ("unrelated words only",))])
    split = words(text)
    if not split:
        return
    stems = stemmer.stems(split)
    assert index.search(stems, 5)[0][0] == 1
    evidence = LexicalEvidence.build(split, stemmer.stems, lambda s: dict.fromkeys(s, 1), 2)
    assert evidence.weights == {} or evidence.of(text) == 1.0
    assert MemoryUnit("m", "w", "", text).length == len(split)


@settings(max_examples=100, deadline=None)
@given(_TEXT)
def test_every_split_is_a_run_of_word_characters(text: str) -> None:
    for term in words(text):
        assert term and re.fullmatch(r"[^\W_]+", term)


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.lists(st.one_of(_CJK, _LATIN), min_size=1, max_size=2).map("".join))
def test_a_lookup_holds_exactly_the_texts_cjk_terms(text: str, probe: str) -> None:
    held = lookup(text)
    split = words(text)
    assert sorted(held.others) == sorted(w for w in split if not is_cjk(w))
    for term in split:
        assert not is_cjk(term) or held.has_cjk(term)
    for term in words(probe):
        if is_cjk(term):
            assert held.has_cjk(term) == (term in split)


@settings(max_examples=100, deadline=None)
@given(st.lists(_CJK, min_size=1, max_size=2).map("".join))
def test_cjk_terms_skip_fts5_and_are_what_fts5_makes_of_them(term: str) -> None:
    fts5 = QueryStemmer()._tokenise([term])[term]
    assert QueryStemmer().tokens([term])[term] == fts5 == (term,)
