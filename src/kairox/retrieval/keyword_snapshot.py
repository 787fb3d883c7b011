"""A keyword index (``kairox.retrieval.bm25``) as bytes, and back: what the store saves per scope
(``kairox.store.keyword_snapshots``) so a fresh process loads its index instead of rebuilding it.

The bytes are an uncompressed ``.npz`` (NumPy arrays; the word lists are UTF-8 joined by newlines,
which no word or stem holds) read with ``allow_pickle=False``: data, never code. ``FORMAT`` names
the layout and the word splitting it was built with; a snapshot of another format, or one that does
not parse, is not used (the index is rebuilt from the store's texts).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Iterator, Mapping

import numpy as np
import numpy.typing as npt

from kairox.retrieval.bm25 import KeywordIndex, KeywordState
from kairox.store.terms import QueryStemmer

FORMAT = 1
"""Bump when the layout, the word splitting or the stemming changes: older snapshots are then
rebuilt, never read with other words."""


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


def _text(items: list[str]) -> np.ndarray:
    return np.frombuffer("\n".join(items).encode(), dtype=np.uint8)


def _items(array: np.ndarray, count: int) -> list[str]:
    if count == 0:
        return []
    items = array.tobytes().decode().split("\n")
    if len(items) != count:
        raise ValueError("word list length")
    return items


def dump(index: KeywordIndex, keys: Mapping[int, int]) -> bytes:
    """``index`` and its documents' versions (``key_digest`` of each) as bytes."""
    state = index.state()
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
    }
    buffer = io.BytesIO()
    np.savez(
        buffer,
        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        words=_text(state.words),
        codes=state.codes,
        multi=np.fromiter((t for m in state.multi for t in m), dtype=np.int64),
        multi_sizes=np.fromiter(map(len, state.multi), dtype=np.int64, count=len(state.multi)),
        terms=_text(state.terms),
        ids=state.ids,
        lengths=state.lengths,
        indptr=state.indptr,
        slots=state.slots,
        tfs=state.tfs,
        key_ids=np.fromiter(keys.keys(), dtype=np.int64, count=len(keys)),
        key_digests=np.fromiter(keys.values(), dtype=np.uint64, count=len(keys)),
    )
    return buffer.getvalue()


def load(
    data: bytes, *, weights: tuple[float, ...], stemmer: QueryStemmer | None = None
) -> tuple[KeywordIndex, Mapping[int, int]] | None:
    """The index and document versions ``dump`` wrote, or None when ``data`` is of another
    format, other field weights, or does not parse."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            meta = json.loads(arrays["meta"].tobytes().decode())
            if meta.get("format") != FORMAT or tuple(meta["weights"]) != tuple(weights):
                return None
            sizes = arrays["multi_sizes"].tolist()
            flat = arrays["multi"].tolist()
            multi, at = [], 0
            for size in sizes:
                multi.append(tuple(flat[at : at + size]))
                at += size
            counted = meta["counted"]
            state = KeywordState(
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
                tfs=arrays["tfs"],
                max_id=int(meta["max_id"]),
                total_length=float(meta["total_length"]),
            )
            keys = SavedKeys(arrays["key_ids"], arrays["key_digests"])
    except (ValueError, KeyError, OSError, TypeError, EOFError, zipfile.BadZipFile):
        return None
    return KeywordIndex.from_state(state, stemmer=stemmer), keys
