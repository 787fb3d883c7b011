"""The one registry of model backends: a spec prefix (``openai`` in ``openai:gpt-4o``) maps to a
factory, so the accepted forms, the parser and the builder all read the same table (a
``kairox.core.registry.Registry``, as the embedders and knowledge-base kinds use).

The built-in backends register here with lazily imported factories (a missing extra fails only
for its backend); ``register`` adds a prefix of your own, e.g. ``register("echo", make_echo,
networked=False)``, and installed packages add prefixes through the ``kairox.models`` entry
points (``kairox.core.plugins``). A backend says what it is when it registers
(``kairox.core.backends``): the trust check, the request budget and the system prompt read that,
never a list of names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kairox.core.backends import UNKNOWN, ArgumentCheck, BackendTraits, PromptKind, spec_prefix
from kairox.core.errors import ConfigError
from kairox.core.plugins import MODELS, failure_note
from kairox.core.registry import Registry
from kairox.models.base import ModelProvider, ProviderSettings

ProviderFactory = Callable[[str, ProviderSettings], ModelProvider]
"""Builds a provider from the part of the spec after ``prefix:`` (``""`` for a bare prefix that
allows it) and the profile's settings (endpoint, key variable, timeout, window)."""


@dataclass(frozen=True, slots=True)
class Backend:
    """One registered spec prefix. ``argument`` names what follows ``prefix:`` in the accepted
    forms (``openai:<model>``); ``bare`` lets the prefix alone be a spec (``local``); ``traits``
    is what the backend declared itself to be."""

    prefix: str
    factory: ProviderFactory
    argument: str = "model"
    bare: bool = False
    traits: BackendTraits = UNKNOWN

    @property
    def forms(self) -> tuple[str, ...]:
        full = f"{self.prefix}:<{self.argument}>"
        return (self.prefix, full) if self.bare else (full,)


@dataclass(frozen=True)
class ParsedSpec:
    kind: str  # the registered prefix
    argument: str | None  # the model name or path; None only for a bare prefix


_BACKENDS: Registry[Backend] = Registry("model prefix", plugins=MODELS)


def register(
    prefix: str,
    factory: ProviderFactory,
    *,
    networked: bool = True,
    sends_tool_definitions: bool = False,
    prompt: PromptKind = "full",
    untrusted_argument: ArgumentCheck | None = None,
    argument: str = "model",
    bare: bool = False,
    replace: bool = False,
) -> Backend | None:
    """Make ``prefix:<argument>`` a model spec everywhere one is accepted (profiles, ``--model``,
    the facade, ``Memory``). Returns the backend it replaced (with ``replace=True``), else None.

    The backend declares what it is: ``networked`` (prompts and a key leave the machine, so an
    untrusted repository may not choose it; the default, since that is the safe reading),
    ``sends_tool_definitions`` (its requests carry the tool schemas, which the budget counts),
    ``prompt`` (the system prompt it gets) and, for a backend that stays on the machine,
    ``untrusted_argument`` (which arguments an untrusted repository may pass it).

    Registering a prefix that exists without ``replace=True`` is a ``ValueError``, so two
    plugins cannot silently take the same prefix.
    """
    traits = BackendTraits(
        networked=networked,
        sends_tool_definitions=sends_tool_definitions,
        prompt=prompt,
        untrusted_argument=untrusted_argument,
    )
    entry = Backend(prefix, factory, argument=argument, bare=bare, traits=traits)
    return _BACKENDS.add(prefix, entry, replace=replace)


def unregister(prefix: str) -> Backend:
    """Remove a prefix; returns its backend (re-register it with ``restore``)."""
    removed = _BACKENDS.remove(prefix)
    if removed is None:
        raise ValueError(f"model prefix '{prefix}' is not registered")
    return removed


def restore(backend: Backend) -> None:
    """Put back a backend that ``register(..., replace=True)`` or ``unregister`` returned."""
    _BACKENDS.add(backend.prefix, backend, replace=True)


def backend(prefix: str) -> Backend:
    """The backend registered for ``prefix``; ``ValueError`` when there is none."""
    found = _BACKENDS.get(prefix)
    if found is None:
        raise ValueError(f"model prefix '{prefix}' is not registered")
    return found


def describe(spec: str) -> BackendTraits:
    """What the backend a spec (or a bare prefix) names declared itself to be; ``UNKNOWN``
    (networked) for a prefix nobody registered. Never parses, so it reads any spec."""
    found = _BACKENDS.get(spec_prefix(spec))
    return found.traits if found is not None else UNKNOWN


def prefixes() -> tuple[str, ...]:
    """The registered prefixes, in registration order."""
    return _BACKENDS.names()


def spec_forms() -> str:
    """The accepted spec forms, for error messages and help (``openai:<model>, local, ...``)."""
    return ", ".join(form for b in _BACKENDS.entries() for form in b.forms)


def parse_spec(spec: str) -> ParsedSpec:
    """Split a spec into its prefix and argument; unknown or incomplete specs are ConfigErrors."""
    text = spec.strip()
    prefix, sep, argument = text.partition(":")
    if not sep:
        found = _BACKENDS.get(text)
        if found is not None and found.bare:
            return ParsedSpec(text, None)
    argument = argument.strip()
    found = _BACKENDS.get(prefix) if sep else None
    if found is None:
        raise ConfigError(
            f"unknown model spec '{spec}'{failure_note(MODELS)}",
            key="model",
            fix=f"use one of {spec_forms()}",
        )
    if not argument:
        raise ConfigError(
            f"model spec '{spec}' has no <{found.argument}> after '{prefix}:'",
            key="model",
            fix=f"use one of {spec_forms()}",
        )
    return ParsedSpec(prefix, argument)


def create_provider(spec: str, *, settings: ProviderSettings | None = None) -> ModelProvider:
    """Build the provider a spec names. Raises ConfigError or MissingExtra, never network errors."""
    parsed = parse_spec(spec)
    return backend(parsed.kind).factory(parsed.argument or "", settings or ProviderSettings())


# -- the built-in backends, each imported only when a spec asks for it ------------------------


def _openai(model: str, settings: ProviderSettings) -> ModelProvider:
    from kairox.models.openai import OpenAIProvider

    return OpenAIProvider(model, settings=settings)


def _anthropic(model: str, settings: ProviderSettings) -> ModelProvider:
    from kairox.models.anthropic import AnthropicProvider

    return AnthropicProvider(model, settings=settings)


def _local(path: str, settings: ProviderSettings) -> ModelProvider:
    from kairox.models.local import LocalProvider

    spec = f"local:{path}" if path else "local"
    return LocalProvider(
        model_path=path or settings.model_path, n_ctx=settings.n_ctx, spec=spec, home=settings.home
    )


def _scripted(path: str, settings: ProviderSettings) -> ModelProvider:
    from kairox.models.scripted import ScriptedProvider

    del settings  # a script needs no endpoint
    return ScriptedProvider.from_file(path)


def _pulled_name(argument: str, home: Path) -> bool:
    """What an untrusted repository may hand ``local``: nothing (plain ``local``) or the NAME of
    a model pulled into the home's ``models/``, never a path (not even one inside the home)."""
    if not argument:
        return True
    from kairox.models.catalog import find_pulled

    if "/" in argument or "\\" in argument or argument.lower().endswith(".gguf"):
        return False
    return find_pulled(argument, home) is not None


register("openai", _openai, networked=True, sends_tool_definitions=True)
register("anthropic", _anthropic, networked=True, sends_tool_definitions=True)
register(
    "local",
    _local,
    networked=False,
    prompt="local",
    untrusted_argument=_pulled_name,
    argument="path-to-gguf",
    bare=True,
)
register("scripted", _scripted, networked=False, argument="path-to-jsonl")
