"""History recall for a turn, for the ``recall_history`` tool and for the surfaces.

A session recalls from its own log by default, or from every session of its workspace when
``[recall] sessions = "workspace"``; the history index never searches another workspace. Recalled
text is rendered with its date and speaker, and ``<memory`` is neutralised in it, so a marker
inside an old turn can never read as one. Callers list recalled hits as untrusted input.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from kairox.context.render import RECALL_PREFIX
from kairox.core.aio import blocking
from kairox.core.config import RecallConfig
from kairox.retrieval.history import HistoryIndex
from kairox.retrieval.history_hits import HistoryHit
from kairox.retrieval.types import RetrievalHit

_MARKER = re.compile(r"<(/?)(memory)", re.IGNORECASE)


def neutralise_markers(text: str) -> str:
    """``<memory`` and ``</memory`` as inert text: recalled words are never a proposal."""
    return _MARKER.sub(r"&lt;\1\2", text)


def recall_hit(hit: HistoryHit) -> RetrievalHit:
    """A recalled event as a context passage: ref ``seq:N``, dated text, session and turn."""
    turn = f", turn {hit.turn}" if hit.turn is not None else ""
    return RetrievalHit(
        source=f"{RECALL_PREFIX}{hit.session}",
        chunk_id=f"seq:{hit.seq}",
        text=f"[{hit.date}] {hit.speaker}: {neutralise_markers(hit.text)}",
        score=hit.score,
        title=f"session {hit.session}{turn}, {hit.role}",
    )


def relevant(hit: HistoryHit, min_cosine: float) -> bool:
    """A hit joins a turn's context when a keyword matched, or the vector side is sure enough."""
    return hit.bm25 is not None or (hit.cosine is not None and hit.cosine >= min_cosine)


class SessionRecall:
    """Recall bound to one session: its scope, its ``[recall]`` settings and the index."""

    def __init__(
        self,
        index: HistoryIndex,
        config: RecallConfig,
        *,
        workspace_id: str,
        session_id: str,
        floor: float = 0.0,
    ) -> None:
        self.index = index
        self.config = config
        self.workspace_id = workspace_id
        self.session_id = session_id
        self.floor = floor  # ``[retrieval] min_score``: the turn's assembler applies it too

    @property
    def _scope_session(self) -> str | None:
        return None if self.config.sessions == "workspace" else self.session_id

    async def for_turn(
        self, query: str, *, exclude: Collection[int], before_seq: int
    ) -> list[RetrievalHit]:
        """Hits for the assembler: not in ``exclude`` (the history window), before the prompt.
        Those under the floor are kept: the assembler traces them and leaves them out."""
        if not self.config.enabled or self.config.k <= 0 or not query.strip():
            return []
        hits = await blocking(
            self.index.search,
            query,
            workspace_id=self.workspace_id,
            session_id=self._scope_session,
            k=self.config.k,
            exclude=frozenset(exclude),
            before_seq=before_seq,
        )
        return [recall_hit(h) for h in hits if relevant(h, self.config.min_cosine)]

    async def search(self, query: str, *, k: int = 5) -> list[HistoryHit]:
        """The plain search the ``recall_history`` tool runs (the whole scope, nothing excluded,
        nothing under the floor)."""
        hits = await blocking(
            self.index.search,
            query,
            workspace_id=self.workspace_id,
            session_id=self._scope_session,
            k=k,
        )
        return [h for h in hits if h.score >= self.floor]


def tool_text(hits: list[HistoryHit]) -> str:
    """The ``recall_history`` tool's result: one dated block per hit."""
    if not hits:
        return "no matches in the conversation history"
    blocks = []
    for hit in hits:
        turn = f" turn {hit.turn}" if hit.turn is not None else ""
        head = f"[seq:{hit.seq} · session {hit.session}{turn} · {hit.date} · {hit.speaker}]"
        blocks.append(f"{head}\n{neutralise_markers(hit.text)}")
    return "\n\n".join(blocks)
