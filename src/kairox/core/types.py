"""Enums shared by every layer. Each has one serialised form, and parsing an unknown value fails."""

from __future__ import annotations

import re
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
                f"unknown {cls.words()} '{value}'; expected one of: {allowed}"
            ) from None

    @classmethod
    def words(cls) -> str:
        """The enum's name as a person says it: ``MemoryStatus`` -> ``memory status``."""
        return re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower()


class MemoryScope(_StrictEnum):
    SESSION = "session"
    USER = "user"
    WORKSPACE = "workspace"


class MemoryStatus(_StrictEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    DELETED = "deleted"


class MemoryOrigin(_StrictEnum):
    """What produced a proposal: a marker in a reply, the extraction call, or an outside client
    (MCP, the library). Imports and older events carry none."""

    REPLY = "reply"
    EXTRACTION = "extraction"
    CLIENT = "client"


class Actor(_StrictEnum):
    """Who made a change: the model (a proposal), the policy (auto-accept), a user through a
    surface, or the system."""

    MODEL = "model"
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
