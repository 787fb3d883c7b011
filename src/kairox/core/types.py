"""Enums shared by every layer. Each has one serialised form, and parsing an unknown value fails."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from kairox.core.errors import InvalidInput


class _StrictEnum(StrEnum):
    @classmethod
    def parse(cls, value: str) -> Self:
        try:
            return cls(value)
        except ValueError:
            allowed = ", ".join(m.value for m in cls)
            raise InvalidInput(
                f"unknown {cls.__name__} '{value}'; expected one of: {allowed}"
            ) from None


class MemoryScope(_StrictEnum):
    SESSION = "session"
    USER = "user"
    WORKSPACE = "workspace"


class MemoryStatus(_StrictEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    DELETED = "deleted"


class Actor(_StrictEnum):
    """Who made a change: the policy (auto-accept), a user through a surface, or the system."""

    POLICY = "policy"
    USER = "user"
    SYSTEM = "system"


class ContextSource(_StrictEnum):
    SYSTEM = "system"
    MEMORY = "memory"
    WORKSPACE = "workspace"
    KNOWLEDGE_BASE = "knowledge_base"
    RECALL = "recall"
    SUMMARY = "summary"
    HISTORY = "history"
    PROMPT = "prompt"


class SessionState(_StrictEnum):
    IDLE = "idle"
    RUNNING_TURN = "running_turn"
    COMPACTING = "compacting"
    SWITCHING_PROFILE = "switching_profile"
    ARCHIVING = "archiving"
