"""A keyword index (``kairox.retrieval.bm25``) as bytes, and back: what the store saves per scope
(``kairox.store.keyword_snapshots``) so a fresh process loads its index instead of rebuilding it.

The layout is flat so that a load is a read of the bytes and NumPy views into them, not a parse:
``MAGIC``, the header's length (8 bytes, little-endian), a JSON header (the index's settings and
each array's dtype, length and offset), then each array at an 8-byte aligned offset. Nothing is
copied or decoded at load but the word lists (UTF-8 joined by newlines, which no word or stem
holds) and the weighted term frequencies: those are multiples of a field weight's unit (counts,
or half counts), so they are stored as small integers of that unit (one or two bytes instead of
four: the read of the bytes is most of a load) when that is exact, as float32 otherwise.
Arrays are data, never code (no pickles). ``FORMAT`` names the layout and the word splitting it
was built with; a snapshot of another format, or one that fails its bounds checks (offsets,
postings pointers, slots and term ids in range), is not used: the index is rebuilt from the
store's texts, never read out of range.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from kairox.retrieval.bm25 import KeywordIndex, KeywordState
from kairox.store.terms import QueryStemmer

FORMAT = 2
"""Bump when the layout, the word splitting or the stemming changes: older snapshots are then
rebuilt, never read with other words."""

MAGIC = b"KXKW"
_ALIGN = 8
_DTYPES = {"i8": np.int64, "u8": np.uint64, "f8": np.float64, "i4": np.int32, "f4": np.float32,
           "u1": np.uint8, "i1": np.int8, "i2": np.int16}  # fmt: skip
_UNITS = (1.0, 0.5, 0.25, 0.125)  # what stored term frequencies may be counted in


class SavedKeys(Mapping[int, int]):
    """A saved index's document versions (id -> ``key_digest``), made a dict on first read: a
    process whose scope has not moved since the save never needs them."""

    def __init__(self, ids: npt.NDArray[np.int64], digests: npt.NDArray[np.uint64]) -> None:
        if len(ids) != len(digests):
            raise ValueError(f"{len(ids)} ids but {len(digests)} versions")
        self._arrays: tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]] | None = (ids, digests)
        self._dict: dict[int, int] = {}

    def _built(self) -> dict[int, int]:
        if self._arrays is not None:
            ids, digests = self._arrays
            self._dict = dict(zip(ids.tolist(), digests.tolist(), strict=True))
            self._arrays = None
        return self._dict

    def __getitem__(self, key: int) -> int:
        return self._built()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._arrays[0]) if self._arrays is not None else len(self._dict)


def key_digest(key: str) -> int:
    """A document's version (``RankStore.keyword_keys``) as 64 bits, as a snapshot keeps it."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def _text(items: list[str]) -> npt.NDArray[np.uint8]:
    return np.frombuffer("\n".join(items).encode(), dtype=np.uint8)


def _items(array: npt.NDArray[np.uint8], count: int) -> list[str]:
    if count == 0:
        return []
    items = array.tobytes().decode().split("\n")
    if len(items) != count:
        raise ValueError("word list length")
    return items


def _frequencies(tfs: npt.NDArray[np.float32]) -> dict[str, np.ndarray]:
    """``tfs`` as the smallest integers of a unit that give them back exactly, else as is."""
    if not len(tfs):
        return {"tfs": tfs}
    for unit in _UNITS:
        scaled = np.rint(tfs.astype(np.float64) / unit)
        peak = float(np.abs(scaled).max())
        kind = np.int8 if peak <= 127 else np.int16 if peak <= 32767 else None
        if kind is None:
            continue
        counts = scaled.astype(kind)
        if np.array_equal(_decoded(counts, unit), tfs):
            return {"tf_counts": counts, "tf_unit": np.array([unit], dtype=np.float64)}
    return {"tfs": tfs}


def _decoded(counts: np.ndarray, unit: float) -> npt.NDArray[np.float32]:
    tfs = counts.astype(np.float32)
    if unit != 1.0:
        tfs *= np.float32(unit)
    return tfs


def dump(index: KeywordIndex, keys: Mapping[int, int]) -> bytes:
    """``index`` and its documents' versions (``key_digest`` of each) as bytes."""
    state = index.state()
    arrays: dict[str, np.ndarray] = {
        "words": _text(state.words),
        "codes": np.asarray(state.codes, dtype=np.int64),
        "multi": np.fromiter((t for m in state.multi for t in m), dtype=np.int64),
        "multi_sizes": np.fromiter(map(len, state.multi), dtype=np.int64, count=len(state.multi)),
        "terms": _text(state.terms),
        "ids": np.asarray(state.ids, dtype=np.int64),
        "lengths": np.asarray(state.lengths, dtype=np.float64),
        "indptr": np.asarray(state.indptr, dtype=np.int64),
        "slots": np.asarray(state.slots, dtype=np.int32),
        **_frequencies(np.asarray(state.tfs, dtype=np.float32)),
        "key_ids": np.fromiter(keys.keys(), dtype=np.int64, count=len(keys)),
        "key_digests": np.fromiter(keys.values(), dtype=np.uint64, count=len(keys)),
    }
    layout: dict[str, list[Any]] = {}
    offset = 0
    for name, array in arrays.items():
        layout[name] = [array.dtype.str.lstrip("<|="), len(array), offset]
        offset += -(-array.nbytes // _ALIGN) * _ALIGN
    meta = {
        "format": FORMAT,
        "weights": list(state.weights),
        "counted": list(state.counted) if state.counted is not None else None,
        "k1": state.k1,
        "b": state.b,
        "max_id": state.max_id,
        "total_length": state.total_length,
        "words": len(state.words),
        "terms": len(state.terms),
        "arrays": layout,
    }
    header = json.dumps(meta).encode()
    header += b" " * (-(len(MAGIC) + 8 + len(header)) % _ALIGN)
    parts = [MAGIC, len(header).to_bytes(8, "little"), header]
    for array in arrays.values():
        raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        parts.append(raw + b"\0" * (-len(raw) % _ALIGN))
    return b"".join(parts)


def _views(data: bytes, layout: dict[str, list[Any]], base: int) -> dict[str, np.ndarray]:
    """Each array of ``layout`` as a read-only view into ``data`` (no copy)."""
    out: dict[str, np.ndarray] = {}
    for name, (dtype, count, offset) in layout.items():
        kind = np.dtype(_DTYPES[dtype]).newbyteorder("<")
        start = base + int(offset)
        if count < 0 or offset < 0 or start + count * kind.itemsize > len(data):
            raise ValueError(f"array {name} out of range")
        out[name] = np.frombuffer(data, dtype=kind, count=int(count), offset=start)
    return out


def _checked(state: KeywordState) -> KeywordState:
    """``state`` when every pointer in it is in range (so a search never reads outside an
    array), else ValueError."""
    docs, terms = len(state.ids), len(state.terms)
    indptr, slots = state.indptr, state.slots
    if len(state.lengths) != docs or len(state.tfs) != len(slots) or len(indptr) > terms + 1:
        raise ValueError("array lengths")
    if not len(indptr) or indptr[0] != 0 or indptr[-1] != len(slots):
        raise ValueError("postings pointers")
    if len(indptr) > 1 and np.any(np.diff(indptr) < 0):
        raise ValueError("postings pointers")
    if len(slots) and (int(slots.min()) < 0 or int(slots.max()) >= docs):
        raise ValueError("postings slots")
    codes = state.codes
    if len(codes) and (int(codes.max()) >= terms or int(codes.min()) < -len(state.multi)):
        raise ValueError("word codes")
    if any(t < 0 or t >= terms for m in state.multi for t in m):
        raise ValueError("word codes")
    return state


def load(
    data: bytes, *, weights: tuple[float, ...], stemmer: QueryStemmer | None = None
) -> tuple[KeywordIndex, Mapping[int, int]] | None:
    """The index and document versions ``dump`` wrote, or None when ``data`` is of another
    format, other field weights, or fails its checks."""
    try:
        if data[: len(MAGIC)] != MAGIC:
            return None
        size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
        base = len(MAGIC) + 8 + size
        meta = json.loads(data[len(MAGIC) + 8 : base].decode())
        if meta.get("format") != FORMAT or tuple(meta["weights"]) != tuple(weights):
            return None
        arrays = _views(data, meta["arrays"], base)
        if "tf_counts" in arrays:
            (unit,) = arrays["tf_unit"].tolist()
            if unit not in _UNITS:
                raise ValueError("term frequency unit")
            tfs = _decoded(arrays["tf_counts"], unit)
        else:
            tfs = arrays["tfs"]
        sizes = arrays["multi_sizes"].tolist()
        flat = arrays["multi"].tolist()
        if sum(sizes) != len(flat) or min(sizes, default=0) < 0:
            raise ValueError("multi-token words")
        multi, at = [], 0
        for size in sizes:
            multi.append(tuple(flat[at : at + size]))
            at += size
        counted = meta["counted"]
        state = _checked(
            KeywordState(
                weights=tuple(float(w) for w in meta["weights"]),
                counted=tuple(bool(c) for c in counted) if counted is not None else None,
                k1=float(meta["k1"]),
                b=float(meta["b"]),
                words=_items(arrays["words"], int(meta["words"])),
                codes=arrays["codes"],
                multi=multi,
                terms=_items(arrays["terms"], int(meta["terms"])),
                ids=arrays["ids"],
                lengths=arrays["lengths"],
                indptr=arrays["indptr"],
                slots=arrays["slots"],
                tfs=tfs,
                max_id=int(meta["max_id"]),
                total_length=float(meta["total_length"]),
            )
        )
        keys = SavedKeys(arrays["key_ids"], arrays["key_digests"])
        return KeywordIndex.from_state(state, stemmer=stemmer), keys
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError, AttributeError):
        return None
