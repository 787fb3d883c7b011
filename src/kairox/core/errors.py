"""The error hierarchy. Every error Kairox raises on purpose derives from ``KairoxError``.

    KairoxError
    ├── ConfigError            a config file or value is wrong (file, key, fix)
    ├── MissingExtra           an optional backend's dependency is not installed
    ├── StoreError             the database cannot be opened or written
    │   └── AppendOnlyViolation
    ├── NotFound               an id or name does not exist (kind, ident)
    ├── InvalidInput           a bad argument from a user (scope, status, body...)
    ├── MemoryDecisionError    a decision conflicts with the memory's current status
    ├── ContextOverflow        the irreducible prompt does not fit the budget
    ├── SessionBusy            another process or command holds the session
    ├── SessionArchivedError   a turn was sent to an archived session
    ├── ModelError             a model provider failed (dead endpoint, bad key, script exhausted)
    └── RetrievalError         a retrieval source failed

Surfaces translate these into one line at their edge: ``str(error)`` is that line.
"""

from __future__ import annotations

import shlex


class KairoxError(Exception):
    """Root of every error Kairox raises on purpose."""


class ConfigError(KairoxError):
    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.file = file
        self.key = key
        self.fix = fix
        parts = []
        if file:
            parts.append(file)
        if key:
            parts.append(f"key '{key}'")
        where = (": ".join(parts) + ": ") if parts else ""
        tail = f" Fix: {fix}" if fix else ""
        super().__init__(f"config error: {where}{message}.{tail}")


class MissingExtra(KairoxError):
    def __init__(self, feature: str, extra: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(f"{feature} needs an optional dependency: pip install 'kairox[{extra}]'")


class StoreError(KairoxError):
    """The database could not be opened, migrated or written."""


class AppendOnlyViolation(StoreError):
    """Something tried to change or delete a row of the append-only event log."""


class NotFound(KairoxError):
    def __init__(self, kind: str, ident: str, *, by: str = "id", hint: str = "") -> None:
        self.kind = kind
        self.ident = ident
        super().__init__(f"no {kind} with {by} '{ident}'" + (f"; {hint}" if hint else ""))


class InvalidInput(KairoxError):
    """A user-supplied value is not acceptable; the message says which values are."""


class MemoryDecisionError(KairoxError):
    def __init__(self, memory_id: str, status: str, action: str) -> None:
        self.memory_id = memory_id
        self.status = status
        self.action = action
        super().__init__(f"cannot {action} memory {memory_id}: it is already {status}")


class ContextOverflow(KairoxError):
    def __init__(self, required: int, budget: int, *, window: int, headroom: int) -> None:
        self.required = required
        self.budget = budget
        self.window = window
        self.headroom = headroom
        super().__init__(
            f"context overflow: the system prompt and the new prompt need {required} tokens, "
            f"but the budget is {budget} (window {window} - headroom {headroom}); "
            "shorten the prompt or switch to a profile with a larger window"
        )


class SessionBusy(KairoxError):
    def __init__(self, session: str, holder: str | None = None) -> None:
        self.session = session
        self.holder = holder
        who = f" (held by {holder})" if holder else ""
        super().__init__(
            f"session busy: '{session}' is running in another process{who}; retry when it finishes"
        )


class SessionArchivedError(KairoxError):
    def __init__(self, session: str, workspace: str | None = None) -> None:
        self.session = session
        where = f" --workspace {shlex.quote(workspace)}" if workspace else ""
        super().__init__(
            f"session '{session}' is archived; run "
            f"`kairox sessions unarchive {shlex.quote(session)}{where}` to use it"
        )


class ModelError(KairoxError):
    def __init__(self, provider: str, reason: str) -> None:
        self.provider = provider
        self.reason = reason
        super().__init__(f"model error ({provider}): {reason}")


class RetrievalError(KairoxError):
    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"retrieval error ({source}): {reason}")
