"""Chunking: line ranges, size bound, overlap, and cuts at definitions in code."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from kairox.retrieval.chunking import ChunkingOptions, chunk_text, is_code_path, split_lines

# Decoded files never hold lone surrogates (Cs).
LINE = st.text(
    alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)),
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(LINE, max_size=80),
    max_chars=st.integers(min_value=40, max_value=600),
    overlap=st.integers(min_value=0, max_value=4),
    path=st.sampled_from(["notes.md", "main.py", "data.txt"]),
)
def test_chunks_cover_every_line_within_the_size_bound(
    lines: list[str], max_chars: int, overlap: int, path: str
) -> None:
    text = "\n".join(lines)
    chunks = chunk_text(text, path, ChunkingOptions(max_chars=max_chars, overlap_lines=overlap))
    file_lines = split_lines(text)
    covered: set[int] = set()
    for i, chunk in enumerate(chunks):
        assert chunk.ord == i
        assert 1 <= chunk.start_line <= chunk.end_line <= len(file_lines)
        assert len(chunk.text) <= max_chars
        assert chunk.text.strip()
        if all(len(line) <= max_chars for line in file_lines):
            assert chunk.text == "\n".join(file_lines[chunk.start_line - 1 : chunk.end_line])
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    for number, line in enumerate(file_lines, start=1):
        if line.strip():
            assert number in covered
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)


def test_consecutive_prose_chunks_overlap_by_the_configured_lines() -> None:
    text = "\n".join(f"sentence number {i} of a long paragraph" for i in range(60))
    chunks = chunk_text(text, "notes.txt", ChunkingOptions(max_chars=300, overlap_lines=2))
    assert len(chunks) > 3
    for before, after in itertools.pairwise(chunks):
        assert after.start_line == before.end_line - 1
        assert before.text.splitlines()[-2:] == after.text.splitlines()[:2]


def test_code_is_cut_at_definition_boundaries() -> None:
    functions = [
        f"def function_{i}(x):\n    total = x\n    total += {i}\n    return total\n"
        for i in range(12)
    ]
    text = "\n\n".join(functions)
    chunks = chunk_text(text, "module.py", ChunkingOptions(max_chars=200, overlap_lines=0))
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.startswith("def function_")
        assert chunk.text.rstrip().endswith("return total")


def test_decorators_stay_with_their_function() -> None:
    body = "    return 1\n" * 3
    text = "".join(f"@decorator\ndef f{i}():\n{body}\n" for i in range(10))
    chunks = chunk_text(text, "deco.py", ChunkingOptions(max_chars=120, overlap_lines=0))
    assert all(c.text.startswith("@decorator\ndef f") for c in chunks)


def test_markdown_prefers_headings() -> None:
    sections = [f"# Section {i}\n\n" + "words and more words\n" * 5 for i in range(6)]
    chunks = chunk_text("\n".join(sections), "README.md", ChunkingOptions(max_chars=200))
    assert len(chunks) >= 3
    assert all(c.text.startswith("# Section") for c in chunks)


def test_overlong_line_is_split_but_keeps_its_line_number() -> None:
    text = "short\n" + "word " * 200 + "\nlast\n"
    chunks = chunk_text(text, "x.txt", ChunkingOptions(max_chars=100, overlap_lines=0))
    assert all(len(c.text) <= 100 for c in chunks)
    middle = [c for c in chunks if c.start_line == 2 and c.end_line == 2]
    assert len(middle) >= 9
    assert "".join(c.text for c in middle).split() == ["word"] * 200


def test_blank_and_empty_files_give_no_chunks_and_crlf_counts_once() -> None:
    assert chunk_text("", "a.py") == []
    assert chunk_text("\n\n   \n", "a.py") == []
    (chunk,) = chunk_text("one\r\ntwo\r\n\r\nthree\r\n", "a.txt")
    assert (chunk.start_line, chunk.end_line) == (1, 4)
    assert chunk.text == "one\ntwo\n\nthree"


def test_same_text_same_hash_and_code_detection() -> None:
    a = chunk_text("alpha\nbeta\n", "a.txt")[0]
    b = chunk_text("alpha\nbeta\n", "b.txt")[0]
    c = chunk_text("alpha\nbeta!\n", "a.txt")[0]
    assert a.chunk_hash == b.chunk_hash != c.chunk_hash
    assert is_code_path("src/x.PY") and is_code_path("a/b.rs")
    assert not is_code_path("notes.md") and not is_code_path("Makefile")
