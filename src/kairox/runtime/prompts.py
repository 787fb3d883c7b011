"""The system prompt: who the assistant is, then the ``<memory>`` protocol it may use (whose text
lives in ``kairox.memory.protocol``, beside the grammar it describes), then the instructions."""

from __future__ import annotations

from kairox.core.backends import PromptKind
from kairox.memory.protocol import LOCAL_PROTOCOL, MEMORY_PROTOCOL, SHORT_PROMPT

BASE_PROMPT = "You are Kairox, a helpful assistant working in the user's workspace."

__all__ = ["BASE_PROMPT", "PromptKind", "build_system_prompt"]


def build_system_prompt(
    instructions: str, *, short: bool = False, kind: PromptKind | None = None
) -> str:
    """The system prompt: ``full`` (API models), ``local`` (small local models that follow the
    protocol) or ``short`` (the embedded demo model; also ``short=True``)."""
    chosen = kind or ("short" if short else "full")
    if chosen == "short":
        parts = [SHORT_PROMPT]
    elif chosen == "local":
        parts = [LOCAL_PROTOCOL]
    else:
        parts = [BASE_PROMPT, MEMORY_PROTOCOL]
    if instructions.strip():
        parts.append("Instructions:\n" + instructions.strip())
    return "\n\n".join(parts)
