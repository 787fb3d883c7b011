"""The saved keyword index's bytes (``kairox.retrieval.keyword_snapshot``): what is loaded ranks
and updates exactly as the index that was saved, whatever its field weights, and bytes that are
not a sound snapshot are refused (so the index is rebuilt), never read out of range."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kairox.retrieval import keyword_snapshot
from kairox.retrieval.bm25 import KeywordIndex

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]
QUERIES = (["alpha", "beta"], ["gamma"], ["kappa", "mu", "zeta"], ["item7"], ["missing"])


def _index(weights: tuple[float, ...], counted: tuple[bool, ...] | None = None) -> KeywordIndex:
    index = KeywordIndex(weights, counted=counted)
    docs = []
    for i in range(1, 80):
        body = " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(3 + i % 9))
        fields = (f"src/f{i}.py", f"{body} item{i} {body if i % 4 == 0 else ''}", WORDS[i % 12])
        docs.append((i, fields[: len(weights)]))
    index.add(docs)
    index.remove([5, 6, 7])
    return index


def _ranked(index: KeywordIndex) -> list[list[tuple[int, float]]]:
    return [index.search(index.stems(q), 10) for q in QUERIES]


def _round_trip(index: KeywordIndex) -> KeywordIndex:
    keys = {i: keyword_snapshot.key_digest(f"v{i}") for i in index.ids()}
    loaded = keyword_snapshot.load(keyword_snapshot.dump(index, keys), weights=index.weights)
    assert loaded is not None
    restored, saved_keys = loaded
    assert dict(saved_keys) == keys
    return restored


@pytest.mark.parametrize(
    ("weights", "counted"),
    [
        ((1.0,), None),
        ((0.5, 1.0), None),
        ((0.3, 1.0), None),
        ((1.0, 1.0, 0.5), (True, True, False)),
    ],
    ids=["counts", "half-counts", "float-weights", "uncounted-field"],
)
def test_a_loaded_index_ranks_exactly_as_the_saved_one(
    weights: tuple[float, ...], counted: tuple[bool, ...] | None
) -> None:
    index = _index(weights, counted)
    restored = _round_trip(index)
    assert _ranked(restored) == _ranked(index)  # same ids, bit-identical scores
    assert len(restored) == len(index) and restored.ids() == index.ids()


def test_term_frequencies_in_counts_of_a_unit_are_stored_smaller() -> None:
    half = keyword_snapshot.dump(_index((0.5, 1.0)), {})
    floats = keyword_snapshot.dump(_index((0.3, 1.0)), {})  # 0.3 * n is not exact in float32
    assert _layout(half)["tf_counts"][0] == "i1"
    assert "tfs" in _layout(floats)
    assert len(half) < len(floats)


def test_a_loaded_index_updates_as_one_built_from_scratch() -> None:
    """The loaded arrays are views into the stored bytes: updates must not write into them."""
    index = _index((0.5, 1.0))
    restored = _round_trip(index)
    change = [(3, ("src/f3.py", "alpha alpha omega")), (200, ("src/new.py", "gamma omega"))]
    for target in (index, restored):
        target.remove([1, 2, 40])
        target.add(change)
    assert _ranked(restored) == _ranked(index)
    assert restored.search(restored.stems(["omega"]), 10) == index.search(
        index.stems(["omega"]), 10
    )
    assert 40 not in restored and 200 in restored and len(restored) == len(index)


def _layout(data: bytes) -> dict[str, list[int | str]]:
    size = int.from_bytes(data[4:12], "little")
    arrays: dict[str, list[int | str]] = json.loads(data[12 : 12 + size])["arrays"]
    return arrays


def _patched(data: bytes, name: str, at: int, value: int) -> bytes:
    """``data`` with element ``at`` of array ``name`` set to ``value``."""
    size = int.from_bytes(data[4:12], "little")
    dtype, count, offset = _layout(data)[name]
    kind = np.dtype(str(dtype)).newbyteorder("<")
    start = 12 + size + int(offset) + (at % int(count)) * kind.itemsize
    raw = np.array([value], dtype=kind).tobytes()
    return data[:start] + raw + data[start + len(raw) :]


def _header(data: bytes, change: dict[str, object]) -> bytes:
    size = int.from_bytes(data[4:12], "little")
    meta = json.loads(data[12 : 12 + size])
    meta.update(change)
    header = json.dumps(meta).encode()
    header += b" " * (size - len(header)) if len(header) <= size else b""
    return data[:4] + len(header).to_bytes(8, "little") + header + data[12 + size :]


def test_bytes_that_are_not_a_sound_snapshot_are_refused() -> None:
    index = _index((0.5, 1.0))
    good = keyword_snapshot.dump(index, {1: 2})
    docs, terms = len(index.state().ids), len(index.state().terms)
    bad = {
        "empty": b"",
        "not a snapshot": b"not a snapshot at all",
        "truncated": good[: len(good) - 40],
        "slot past the documents": _patched(good, "slots", 3, docs),
        "negative slot": _patched(good, "slots", -1, -1),
        "pointer past the postings": _patched(good, "indptr", -1, 10**9),
        "pointers going back": _patched(good, "indptr", 5, 10**6),
        "word code past the terms": _patched(good, "codes", 0, terms + 3),
        "another format": _header(good, {"format": keyword_snapshot.FORMAT + 1}),
        "an unknown dtype": _header(good, {"arrays": {**_layout(good), "ids": ["O", 1, 0]}}),
        "a term frequency unit not allowed": _patched(good, "tf_unit", 0, 7),
    }
    size = int.from_bytes(good[4:12], "little")
    bad["a header that is a list"] = good[:12] + b"[]" + b" " * (size - 2) + good[12 + size :]
    for why, data in bad.items():
        assert keyword_snapshot.load(data, weights=(0.5, 1.0)) is None, why
    assert keyword_snapshot.load(good, weights=(1.0, 1.0)) is None  # other field weights
    assert keyword_snapshot.load(good, weights=(0.5, 1.0)) is not None
