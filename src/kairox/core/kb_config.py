"""Config models for ``[knowledge_bases.<id>]``: one frozen model per kind, chosen by ``kind``.

Each kind registers its model here (``register_kind``; ``kairox.retrieval.knowledge_bases
.register`` does it with the backend's factory), so a plugin's kind is validated like a built-in
one: once, at load, with errors naming the file, the key and the fix.

Secrets never live in the file: a config names the environment variable that holds a key
(``api_key_env``), and any inline key, secret or token is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from kairox.core.errors import ConfigError
from kairox.core.plugins import KNOWLEDGE_BASES, failure_note
from kairox.core.registry import Registry

KB_KINDS: tuple[str, ...] = ("sqlite_fts", "tantivy", "pinecone", "weaviate", "bedrock")
"""The built-in kinds; ``kinds()`` adds the registered ones."""

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
_AWS_KEY_ID = re.compile(r"^(AKIA|ASIA)[A-Z0-9]{16}$")
_SECRET_KEY = re.compile(r"(api_?key|secret|token|password|credential)", re.IGNORECASE)
_KB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_GRAPHQL_NAME = re.compile(r"^[_A-Za-z][_0-9A-Za-z]*$")


def _env_name(value: str) -> str:
    if not _ENV_NAME.fullmatch(value) or _AWS_KEY_ID.fullmatch(value):
        raise ValueError(
            "must name an environment variable (like PINECONE_API_KEY), not hold the secret itself"
        )
    return value


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")) or len(value) < 8:
        raise ValueError("must be an http:// or https:// URL")
    return value.rstrip("/")


def _graphql_name(value: str) -> str:
    if not _GRAPHQL_NAME.fullmatch(value):
        raise ValueError("must be a GraphQL name: letters, digits and _, not starting with a digit")
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
GraphQLName = Annotated[str, AfterValidator(_graphql_name)]


class KnowledgeBaseSettings(BaseModel):
    """What every kind's config has. A plugin's kind subclasses it with its own settings (or
    registers it as is, when it has none)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    profile_aliases: tuple[str, ...] = ()
    """Model profiles that see this source; empty means every profile."""
    max_results: int = Field(default=5, ge=1, le=200)
    enabled: bool = True
    description: str = ""

    def location(self) -> str:
        """Where the knowledge base lives, for ``kairox kb list``."""
        return ""


class SqliteFtsConfig(KnowledgeBaseSettings):
    """A separate SQLite FTS5 file, loaded with ``kairox kb add <id> FILES…``."""

    kind: Literal["sqlite_fts"]
    path: Path

    def location(self) -> str:
        return str(self.path)


class TantivyConfig(KnowledgeBaseSettings):
    """A tantivy index directory (the ``tantivy`` extra), loaded with ``kairox kb add``."""

    kind: Literal["tantivy"]
    path: Path

    def location(self) -> str:
        return str(self.path)


class PineconeConfig(KnowledgeBaseSettings):
    """A Pinecone index with integrated embedding, queried through "search records"."""

    kind: Literal["pinecone"]
    host: HttpUrl
    namespace: str = "__default__"
    api_key_env: EnvName = "PINECONE_API_KEY"
    text_field: str = "text"
    title_field: str | None = None
    top_k: int | None = Field(default=None, ge=1, le=1000)
    """Candidates requested from Pinecone; the default is the k each search asks for."""
    api_version: str = "2025-04"
    timeout_s: float = Field(default=10.0, gt=0, le=300)

    def location(self) -> str:
        return f"{self.host} (namespace {self.namespace})"


class WeaviateConfig(KnowledgeBaseSettings):
    """A Weaviate collection, queried through ``weaviate-client`` v4 (REST and gRPC)."""

    kind: Literal["weaviate"]
    url: HttpUrl
    grpc_url: HttpUrl | None = None
    """Weaviate's gRPC endpoint; default: the url's host on port 50051 (Weaviate Cloud URLs
    find theirs themselves)."""
    collection: GraphQLName
    api_key_env: EnvName | None = None
    text_property: GraphQLName = "text"
    title_property: GraphQLName | None = None
    query: Literal["bm25", "hybrid", "near_text"] = "hybrid"
    alpha: float | None = Field(default=None, ge=0, le=1)
    """Hybrid weighting (0 = keyword, 1 = vector); Weaviate's default when unset."""
    timeout_s: float = Field(default=10.0, gt=0, le=300)

    def location(self) -> str:
        return f"{self.url} (collection {self.collection})"


class BedrockConfig(KnowledgeBaseSettings):
    """An Amazon Bedrock knowledge base, queried through the Agent Runtime ``Retrieve`` API."""

    kind: Literal["bedrock"]
    knowledge_base_id: str = Field(pattern=r"^[0-9a-zA-Z]{1,10}$")
    region: str = Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d+$")
    endpoint_url: HttpUrl | None = None
    """Overrides ``https://bedrock-agent-runtime.<region>.amazonaws.com`` (tests, VPC endpoints)."""
    access_key_id_env: EnvName = "AWS_ACCESS_KEY_ID"
    secret_access_key_env: EnvName = "AWS_SECRET_ACCESS_KEY"
    session_token_env: EnvName = "AWS_SESSION_TOKEN"
    search_type: Literal["HYBRID", "SEMANTIC"] | None = None
    timeout_s: float = Field(default=10.0, gt=0, le=300)

    def location(self) -> str:
        return f"{self.knowledge_base_id} in {self.region}"


KnowledgeBaseConfig = KnowledgeBaseSettings
"""A validated ``[knowledge_bases.<id>]`` table: the model its ``kind`` registered."""

_MODELS: Registry[type[KnowledgeBaseSettings]] = Registry(
    "knowledge-base kind", plugins=KNOWLEDGE_BASES
)
_BUILT_IN: tuple[type[KnowledgeBaseSettings], ...] = (
    SqliteFtsConfig,
    TantivyConfig,
    PineconeConfig,
    WeaviateConfig,
    BedrockConfig,
)
for _kind, _model in zip(KB_KINDS, _BUILT_IN, strict=True):
    _MODELS.add(_kind, _model)


def register_kind(kind: str, config: type[KnowledgeBaseSettings], *, replace: bool = False) -> None:
    """Accept ``kind = "<kind>"`` in ``[knowledge_bases.<id>]``, validated by ``config``.
    Taking a kind that exists without ``replace=True`` is a ``ValueError``."""
    _MODELS.add(kind, config, replace=replace)


def unregister_kind(kind: str) -> None:
    _MODELS.remove(kind)


def kinds() -> tuple[str, ...]:
    """Every kind a config may name: the built-in ones, then the registered ones."""
    return _MODELS.names()


def config_model(kind: str) -> type[KnowledgeBaseSettings] | None:
    """The model of ``kind``, looking through the installed plugins on a miss."""
    return _MODELS.get(kind)


def parse_knowledge_bases(
    raw: Mapping[str, object], *, file: str, base_dir: Path | None = None
) -> dict[str, KnowledgeBaseConfig]:
    """Validate the ``[knowledge_bases]`` table; relative paths resolve against ``base_dir``.

    ``base_dir`` defaults to the directory of ``file``. Every error is a ``ConfigError`` that
    names the file, the key and the fix.
    """
    root = base_dir if base_dir is not None else Path(file).expanduser().parent
    parsed: dict[str, KnowledgeBaseConfig] = {}
    for kb_id, entry in raw.items():
        prefix = f"knowledge_bases.{kb_id}"
        if not _KB_ID.fullmatch(kb_id):
            raise ConfigError(
                f"'{kb_id}' is not a valid knowledge-base id",
                file=file,
                key=prefix,
                fix="use letters, digits, '_', '.' or '-' (at most 64), starting with a letter "
                "or digit",
            )
        if not isinstance(entry, Mapping):
            raise ConfigError(
                "expected a table",
                file=file,
                key=prefix,
                fix=f'write it as [knowledge_bases.{kb_id}] with kind = "sqlite_fts" (or '
                + ", ".join(kinds()[1:])
                + ")",
            )
        _refuse_inline_secrets(entry, file=file, prefix=prefix)
        kind = entry.get("kind")
        model = config_model(kind) if isinstance(kind, str) else None
        if model is None:
            what = "is missing" if kind is None else f"'{kind}' is unknown"
            raise ConfigError(
                f"the knowledge-base kind {what}{failure_note(KNOWLEDGE_BASES)}",
                file=file,
                key=f"{prefix}.kind",
                fix="set kind to one of " + ", ".join(f'"{k}"' for k in kinds()),
            )
        try:
            config = model.model_validate(dict(entry))
        except ValidationError as exc:
            raise _config_error(exc, entry, file=file, prefix=prefix) from None
        parsed[kb_id] = resolve_paths(config, root)
    return parsed


def resolve_paths(config: KnowledgeBaseConfig, base_dir: Path) -> KnowledgeBaseConfig:
    """The same config with a local index path made absolute (``~`` expanded)."""
    if isinstance(config, SqliteFtsConfig | TantivyConfig):
        path = config.path.expanduser()
        if not path.is_absolute():
            path = base_dir / path
        return config.model_copy(update={"path": path})
    return config


def _refuse_inline_secrets(entry: Mapping[object, object], *, file: str, prefix: str) -> None:
    for key in entry:
        name = str(key)
        if _SECRET_KEY.search(name) and not name.endswith("_env"):
            raise ConfigError(
                "secrets are never stored in config files, and this key holds one inline",
                file=file,
                key=f"{prefix}.{name}",
                fix=f"delete it, export the secret as an environment variable and set "
                f'{_env_key_for(name)} = "<VARIABLE_NAME>"',
            )


def _env_key_for(name: str) -> str:
    lowered = name.lower()
    if "secret" in lowered:
        return "secret_access_key_env"
    if "token" in lowered:
        return "session_token_env"
    if "access_key_id" in lowered:
        return "access_key_id_env"
    return "api_key_env"


def _config_error(
    exc: ValidationError, entry: Mapping[object, object], *, file: str, prefix: str
) -> ConfigError:
    error = exc.errors()[0]
    kind = entry.get("kind")
    loc = [str(part) for part in error["loc"]]
    if loc and loc[0] == kind:
        loc = loc[1:]
    key = ".".join([prefix, *loc]) if loc else prefix
    model = _MODELS.get(str(kind))
    accepted = ", ".join(model.model_fields) if model is not None else ""
    match error["type"]:
        case "missing":
            return ConfigError(
                f"'{loc[-1]}' is required for kind '{kind}'",
                file=file,
                key=key,
                fix=f"add {loc[-1]} = ... (the keys of kind '{kind}' are: {accepted})",
            )
        case "extra_forbidden":
            return ConfigError(
                f"'{loc[-1]}' is not a setting of kind '{kind}'",
                file=file,
                key=key,
                fix=f"remove it; the keys of kind '{kind}' are: {accepted}",
            )
        case _:
            message = str(error["msg"]).removeprefix("Value error, ")
            ctx = error.get("ctx") or {}
            return ConfigError(message, file=file, key=key, fix=_fix_for(error["type"], loc, ctx))


def _fix_for(error_type: str, loc: list[str], ctx: Mapping[str, object]) -> str:
    field = loc[-1] if loc else "the value"
    bounds = {
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("more than", "gt"),
        "less_than_equal": ("at most", "le"),
        "less_than": ("less than", "lt"),
    }
    if error_type in bounds:
        words, bound = bounds[error_type]
        return f"set {field} to {words} {ctx.get(bound)}"
    if error_type == "literal_error":
        return f"set {field} to one of {ctx.get('expected')}"
    if error_type == "string_pattern_mismatch":
        return f"set {field} to a value matching {ctx.get('pattern')}"
    if field.endswith("_env"):
        return f"set {field} to the NAME of the environment variable that holds the secret"
    if field in ("host", "url", "endpoint_url", "grpc_url"):
        return f"set {field} to a full URL such as https://example.com"
    return f"set {field} to a value of the expected type"
