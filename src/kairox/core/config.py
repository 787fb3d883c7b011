"""Config models, validated once at load. Unknown keys are errors, not silently ignored."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, model_validator

ExtractMode = Literal["inline", "after_turn", "off"]
"""How memories are proposed: ``inline`` (the model writes ``<memory>`` markers in its reply),
``after_turn`` (also one extraction call after each completed turn, for models that ignore the
protocol) or ``off`` (no extraction call anywhere; inline markers still work)."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProfileConfig(_Strict):
    """A model profile: which model, its window and headroom, and how to summarise."""

    model: str
    context_window: int | None = Field(default=None, gt=0)
    headroom: int | None = Field(default=None, gt=0)
    summary_profile: str | None = None
    instructions: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    extract: ExtractMode | None = None  # overrides [memory] extract for this profile


class MemoryConfig(_Strict):
    """``session_after_untrusted``: what a session proposal made while untrusted text is in
    context does. ``accept`` (the default) accepts it, marked with its taint; ``ask`` holds it
    for approval like a user or workspace proposal."""

    max_proposals_per_turn: int = Field(default=5, ge=0)
    auto_accept_session: bool = True
    session_after_untrusted: Literal["accept", "ask"] = "accept"
    extract: ExtractMode = "inline"


class RetrievalConfig(_Strict):
    workspace_index: bool = True
    embedder: str = "hashing"
    k: int = Field(default=5, ge=0)
    max_results: int = Field(default=8, ge=0)
    # The relevance floor: hits scoring under it (absolute, 0..1) stay out of the context.
    min_score: float = Field(default=0.2, ge=0.0, le=1.0)
    memory_quota: float = Field(default=0.25, gt=0.0, le=1.0)
    workspace_quota: float = Field(default=0.15, ge=0.0, le=1.0)
    knowledge_base_quota: float = Field(default=0.15, ge=0.0, le=1.0)


class RecallConfig(_Strict):
    """History recall: events of the log that match the prompt but left the history window.

    ``sessions`` is where recall looks: ``session`` (this session's compacted-away turns) or
    ``workspace`` (also the other sessions of the same workspace; never another workspace).
    A hit joins the context when it matched a keyword or its cosine is at least ``min_cosine``.
    """

    enabled: bool = True
    sessions: Literal["session", "workspace"] = "session"
    k: int = Field(default=4, ge=0)
    quota: float = Field(default=0.1, ge=0.0, le=1.0)
    min_cosine: float = Field(default=0.5, ge=-1.0, le=1.0)


class CompactionConfig(_Strict):
    enabled: bool = True
    threshold: float = Field(default=0.85, gt=0.0, le=1.0)
    layer_fraction: float = Field(default=0.5, gt=0.0, lt=1.0)
    max_retries: int = Field(default=2, ge=0)
    retry_backoff_s: float = Field(default=0.5, ge=0.0)
    # How many layers one automatic trigger may summarise before the next turn runs.
    max_rounds: int = Field(default=3, ge=1)


class StoreConfig(_Strict):
    """Where events, memories, sessions and chunks live: no url keeps SQLite in the home;
    ``postgresql://user:password@host/db`` selects Postgres (shared by many processes)."""

    url: str | None = None

    @field_serializer("url")
    def _without_password(self, url: str | None) -> str | None:
        """Shown (``kairox config show``) without its password."""
        return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url) if url else url

    @model_validator(mode="after")
    def _postgres_only(self) -> StoreConfig:
        if self.url is not None and not self.url.startswith(("postgresql://", "postgres://")):
            raise ValueError("store.url must be a postgresql:// URL (or absent for SQLite)")
        return self


# Files ``read_file`` never opens (gitignore patterns): secrets, keys and credentials.
DEFAULT_READ_FILE_DENY: tuple[str, ...] = (
    ".env",
    ".env.*",
    ".envrc",
    ".git/",
    ".ssh/",
    ".aws/",
    ".gnupg/",
    ".docker/config.json",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials",
    "credentials.*",
    "*secret*",
    "*.tfstate",
    "*.tfvars",
)


class ToolsConfig(_Strict):
    """The built-in tools. ``read_file_deny`` replaces the default secret denylist."""

    read_file_deny: tuple[str, ...] = DEFAULT_READ_FILE_DENY
    read_file_max_bytes: int = Field(default=64 * 1024, gt=0, le=16 * 1024 * 1024)


DEFAULT_PROFILES: dict[str, ProfileConfig] = {
    "local": ProfileConfig(model="local", context_window=8192, headroom=1024),
}


class KairoxConfig(_Strict):
    default_profile: str = "local"
    profiles: dict[str, ProfileConfig] = Field(default_factory=lambda: dict(DEFAULT_PROFILES))
    memory: MemoryConfig = MemoryConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    compaction: CompactionConfig = CompactionConfig()
    store: StoreConfig = StoreConfig()
    tools: ToolsConfig = ToolsConfig()
    recall: RecallConfig = RecallConfig()
    knowledge_bases: dict[str, dict[str, object]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _profiles_exist(self) -> KairoxConfig:
        if self.default_profile not in self.profiles:
            raise ValueError(
                f"default_profile '{self.default_profile}' is not a defined profile "
                f"(defined: {', '.join(sorted(self.profiles))})"
            )
        for alias, profile in self.profiles.items():
            if profile.summary_profile and profile.summary_profile not in self.profiles:
                raise ValueError(
                    f"profiles.{alias}.summary_profile '{profile.summary_profile}' is not a "
                    "defined profile"
                )
        return self

    def profile(self, alias: str) -> ProfileConfig:
        from kairox.core.errors import ConfigError

        try:
            return self.profiles[alias]
        except KeyError:
            raise ConfigError(
                f"unknown profile '{alias}'",
                key=f"profiles.{alias}",
                fix=f"use one of: {', '.join(sorted(self.profiles))}, or add [profiles.{alias}]",
            ) from None
