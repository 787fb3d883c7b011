"""The documents every knowledge-base kind is seeded with, and the fakes' keyword scoring."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    text: str


DOCUMENTS: tuple[Doc, ...] = (
    Doc(
        "solar",
        "Solar power",
        "Photovoltaic solar panels convert sunlight directly into electricity. "
        "Panel efficiency drops as the cells heat up on a bright afternoon.",
    ),
    Doc(
        "sourdough",
        "Sourdough bread",
        "A sourdough starter is a culture of wild yeast and lactic acid bacteria. "
        "Feed the starter flour and water before baking the loaf.",
    ),
    Doc(
        "ownership",
        "Rust ownership",
        "Rust's borrow checker enforces ownership: each value has one owner, and "
        "references must not outlive the data they borrow.",
    ),
    Doc(
        "tides",
        "Ocean tides",
        "Tides rise and fall twice a day because the moon's gravity pulls on the oceans; "
        "spring tides come when the sun and moon align.",
    ),
    Doc(
        "volcano",
        "Volcanoes",
        "Magma rises through the crust and erupts as lava; a volcano's shape depends on "
        "how runny its lava is.",
    ),
    Doc(
        "chess",
        "Chess openings",
        "The Sicilian Defence answers 1.e4 with c5, fighting for the centre from the flank "
        "without mirroring White's pawn.",
    ),
)

RELEVANT_QUERY = "photovoltaic panels turn sunlight into electricity"
RELEVANT_ID = "solar"
RELEVANT_WORD = "Photovoltaic"


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def rank(query: str, docs: tuple[Doc, ...] = DOCUMENTS) -> list[tuple[Doc, float]]:
    """Every document, best first, scored by a small BM25-like keyword overlap."""
    terms = set(words(query))
    tokenised = {doc.id: words(f"{doc.title} {doc.text}") for doc in docs}
    n = len(docs)
    scored: list[tuple[Doc, float]] = []
    for doc in docs:
        tokens = tokenised[doc.id]
        score = 0.0
        for term in terms:
            tf = tokens.count(term)
            if tf:
                df = sum(1 for other in tokenised.values() if term in other)
                score += (tf / (tf + 1.2)) * math.log(1 + (n - df + 0.5) / (df + 0.5))
        scored.append((doc, score))
    scored.sort(key=lambda pair: (-pair[1], pair[0].id))
    return scored
