"""Compaction: keep a long session inside its model's window by summarising old history.

``policy`` measures whether the next turn fits, ``layers`` chooses what to summarise (the oldest
unsummarised layer plus the previous summary), ``summariser`` writes the summary, ``verify``
accepts it or builds the deterministic fallback, and ``pipeline.run_compaction`` runs it all over
plain inputs and records the events. When to compact is the runtime's decision; this package
never imports the runtime.
"""

from kairox.compaction.pipeline import SummaryUnavailable, run_compaction
from kairox.compaction.summariser import SummaryModel
from kairox.compaction.target import CompactionTarget

__all__ = ["CompactionTarget", "SummaryModel", "SummaryUnavailable", "run_compaction"]
