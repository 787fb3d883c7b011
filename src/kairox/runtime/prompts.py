"""The system prompt: who the assistant is, then the ``<memory>`` protocol it may use (whose text
lives in ``kairox.memory.protocol``, beside the grammar it describes), then the instructions."""

from __future__ import annotations

from kairox.memory.protocol import MEMORY_PROTOCOL, SHORT_PROMPT

BASE_PROMPT = "You are Kairox, a helpful assistant working in the user's workspace."


def build_system_prompt(instructions: str, *, short: bool = False) -> str:
    """The system prompt; ``short`` is the one for small embedded models."""
    parts = [SHORT_PROMPT] if short else [BASE_PROMPT, MEMORY_PROTOCOL]
    if instructions.strip():
        parts.append("Instructions:\n" + instructions.strip())
    return "\n\n".join(parts)
