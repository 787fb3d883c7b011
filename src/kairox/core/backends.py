"""What a backend is, as it declares itself when it registers: whether it sends data off the
machine, whether its requests carry tool definitions, which system prompt it gets.

The registries (``kairox.models.register``) own the table; code below them (the trust check in
``kairox.core``) is handed a ``Describe`` lookup instead of keeping a list of names. A prefix
nobody registered reads as ``UNKNOWN``: networked, the safe assumption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PromptKind = Literal["full", "local", "short"]
"""``full`` (API models), ``local`` (small local models that follow the protocol; the catalog
may lower a model to ``short``, the embedded demo model's prompt)."""

ArgumentCheck = Callable[[str, Path], bool]
"""Whether an untrusted config may pass this argument (what follows ``prefix:``, ``""`` for a
bare prefix) to the backend, given the home."""


@dataclass(frozen=True, slots=True)
class BackendTraits:
    """What one registered backend is. ``networked``: prompts, workspace text and a key leave
    the machine. ``untrusted_argument``: for a backend that stays on the machine, which
    arguments an untrusted repository may choose (None: any)."""

    networked: bool = True
    sends_tool_definitions: bool = False
    prompt: PromptKind = "full"
    untrusted_argument: ArgumentCheck | None = None


UNKNOWN = BackendTraits()
"""What a prefix nobody registered is taken to be: networked."""

Describe = Callable[[str], BackendTraits]
"""The traits of the backend a model spec names (``UNKNOWN`` when none is registered)."""


def describe_unknown(spec: str) -> BackendTraits:
    """The lookup used when a caller hands none: every model counts as networked."""
    del spec
    return UNKNOWN


def spec_prefix(spec: str) -> str:
    """``openai`` of ``openai:gpt-4o``; a spec without a colon is its own prefix (``local``)."""
    text = spec.strip()
    return text.partition(":")[0].strip() if ":" in text else text
