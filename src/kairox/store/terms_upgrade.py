"""Re-indexing a home's stored terms after the word splitter changed: CJK runs as bigrams
(``0400_cjk_terms``), then words keeping their combining marks and Thai, Lao, Myanmar and Khmer
runs as cluster bigrams (``0430_script_terms``).

Migration ``0400_cjk_terms`` (SQLite and Postgres alike) marks every history and memory unit
(``length = -1``, found through a partial index, so a home with none pending pays nothing at open)
and drops the ``hashing`` embedder's vectors, whose features are the words (a Chinese clause was one
feature). ``reindex_terms`` then recomputes each marked unit's length in batches with a progress
line, and each workspace's length sum. Texts, events and every other embedder's vectors stay:
nothing is lost, and the hashing vectors come back through the usual catch-up (a search, a turn,
``kairox index``). ``0430_script_terms`` marks only the units whose text is not all ASCII (an
English home pays one scan), drops only their hashing vectors and those of such chunks, and drops
the saved keyword indexes (``keyword_snapshots``), which hold the old terms.
"""

from __future__ import annotations

import logging

from kairox.store.migration import Migration
from kairox.store.sql import SqlDatabase
from kairox.store.words import words

log = logging.getLogger(__name__)

_BATCH = 500

CJK_TERMS = Migration(
    "0400_cjk_terms",
    """
    UPDATE history_units SET length = -1;
    UPDATE memory_units SET length = -1;
    CREATE INDEX history_units_unindexed ON history_units(id) WHERE length < 0;
    CREATE INDEX memory_units_unindexed ON memory_units(id) WHERE length < 0;
    DELETE FROM history_vectors WHERE model LIKE 'hashing:%';
    DELETE FROM memory_unit_vectors WHERE model LIKE 'hashing:%';
    DELETE FROM chunk_vectors WHERE model LIKE 'hashing:%';
    UPDATE history_workspaces SET generation = generation + 1;
    UPDATE memory_index_state SET generation = generation + 1;
    UPDATE chunk_workspaces SET generation = generation + 1;
    """,
)


def _script_terms(non_ascii: str) -> Migration:
    """``0430_script_terms`` with ``non_ascii`` the backend's test that a column ``{c}`` holds
    a character beyond ASCII (its bytes outnumber its characters)."""
    history = " OR ".join(non_ascii.format(c=c) for c in ("speaker", "content", "context"))
    memory = " OR ".join(non_ascii.format(c=c) for c in ("key", "body"))
    chunk = non_ascii.format(c="content")
    return Migration(
        "0430_script_terms",
        f"""
        UPDATE history_units SET length = -1 WHERE {history};
        UPDATE memory_units SET length = -1 WHERE {memory};
        DELETE FROM history_vectors WHERE model LIKE 'hashing:%'
            AND unit_id IN (SELECT id FROM history_units WHERE length < 0);
        DELETE FROM memory_unit_vectors WHERE model LIKE 'hashing:%'
            AND unit_id IN (SELECT id FROM memory_units WHERE length < 0);
        DELETE FROM chunk_vectors WHERE model LIKE 'hashing:%'
            AND chunk_id IN (SELECT id FROM chunks WHERE {chunk});
        DELETE FROM keyword_snapshots;
        UPDATE history_workspaces SET generation = generation + 1;
        UPDATE memory_index_state SET generation = generation + 1;
        UPDATE chunk_workspaces SET generation = generation + 1;
        """,
    )


SCRIPT_TERMS = _script_terms("length(CAST({c} AS BLOB)) <> length({c})")
SCRIPT_TERMS_POSTGRES = _script_terms("octet_length({c}) <> length({c})")


def _length(*texts: str) -> int:
    return sum(len(words(t)) for t in texts)


def _pending(db: SqlDatabase, table: str) -> int:
    row = db.query_one(f"SELECT count(*) AS n FROM {table} WHERE length < 0")
    return int(row["n"]) if row else 0


def reindex_terms(db: SqlDatabase) -> int:
    """Recompute the terms of the units a migration marked (``length < 0``); returns how many.
    Idempotent, and safe to interrupt: a unit stays marked until its batch commits."""
    history, memory = _pending(db, "history_units"), _pending(db, "memory_units")
    total = history + memory
    if not total or getattr(db, "readonly", False):
        return 0
    log.warning("re-indexing %d history and memory units for the new search terms", total)
    done = 0
    while True:
        with db.atomic() as conn:
            rows = conn.execute(
                "SELECT id, speaker, content, context FROM history_units WHERE length < 0 "
                "ORDER BY id LIMIT ?",
                (_BATCH,),
            ).fetchall()
            for r in rows:
                texts = (str(r["speaker"]), str(r["content"]), str(r["context"]))
                conn.execute(
                    "UPDATE history_units SET length = ? WHERE id = ?", (_length(*texts), r["id"])
                )
            if not rows:
                conn.execute(
                    "UPDATE history_workspaces SET length_sum = (SELECT coalesce(sum(u.length), "
                    "0) FROM history_units u WHERE u.workspace_id = "
                    "history_workspaces.workspace_id)"
                )
        if not rows:
            break
        done += len(rows)
        log.warning("re-indexing: %d/%d units", done, total)
    while True:
        with db.atomic() as conn:
            rows = conn.execute(
                "SELECT id, key, body FROM memory_units WHERE length < 0 ORDER BY id LIMIT ?",
                (_BATCH,),
            ).fetchall()
            for r in rows:
                fields = (str(r["key"]), str(r["body"]))
                conn.execute(
                    "UPDATE memory_units SET length = ? WHERE id = ?", (_length(*fields), r["id"])
                )
        if not rows:
            break
        done += len(rows)
        log.warning("re-indexing: %d/%d units", done, total)
    return done
