"""Compaction: keep a long session inside its model's window by summarising old history.

``policy`` decides when (does the next turn fit?), ``layers`` what (the oldest unsummarised layer
plus the previous summary), ``summariser`` writes the summary, ``verify`` accepts it or builds the
deterministic fallback, and ``pipeline`` runs it all and records the events.
"""
