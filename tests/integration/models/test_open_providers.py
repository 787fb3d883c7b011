"""Open model providers (issue 24): a provider of the caller's own, handed over as an instance or
registered as a spec prefix, runs real turns through the facade on a real home database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from kairox import models
from kairox.app import AppFacade, TurnDone
from kairox.core.errors import ConfigError
from kairox.core.events import ContextAssembled, Usage
from kairox.core.outcomes import TurnOutcome
from kairox.models import (
    ModelProvider,
    ModelRequest,
    ProviderSettings,
    StreamItem,
    TextDelta,
    UsageReported,
)


class ParrotProvider:
    """A user's own provider: it repeats the prompt's last user message."""

    def __init__(self, name: str = "parrot", settings: ProviderSettings | None = None) -> None:
        self.name = name
        self.settings = settings
        self.requests: list[ModelRequest] = []
        self.closed = False

    @property
    def spec(self) -> str:
        return f"parrot:{self.name}"

    @property
    def model_name(self) -> str:
        return self.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.requests.append(request)
        last = [m for m in request.messages if m.role == "user"][-1].content
        yield TextDelta(f"{self.name} heard: {last.splitlines()[-1]}")
        yield UsageReported(Usage(prompt_tokens=1, completion_tokens=1))

    async def aclose(self) -> None:
        self.closed = True


@pytest.fixture
def parrots() -> Iterator[list[ParrotProvider]]:
    built: list[ParrotProvider] = []

    def factory(model: str, settings: ProviderSettings) -> ModelProvider:
        provider = ParrotProvider(model, settings)
        built.append(provider)
        return provider

    models.register("parrot", factory, networked=False)
    yield built
    models.unregister("parrot")


async def turn(facade: AppFacade, workspace: Path, text: str) -> TurnOutcome:
    await facade.chat.open("main", workspace=workspace)
    outcome: TurnOutcome | None = None
    async for update in facade.chat.send("main", text):
        if isinstance(update, TurnDone):
            outcome = update.outcome
    assert outcome is not None
    return outcome


def write_profile(workspace: Path, model: str) -> None:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        f'default_profile = "mine"\n[profiles.mine]\nmodel = "{model}"\n'
        "timeout_s = 7\n[retrieval]\nworkspace_index = false\n"
    )


def test_the_provider_protocol_is_public_and_checkable() -> None:
    import kairox

    assert kairox.ModelProvider is ModelProvider
    assert isinstance(ParrotProvider(), ModelProvider)
    assert ModelProvider.__doc__ is not None and "StreamFailed" in ModelProvider.__doc__


def test_register_adds_a_prefix_to_the_one_registry(parrots: list[ParrotProvider]) -> None:
    assert "parrot" in models.prefixes()
    assert "parrot:<model>" in models.spec_forms()
    assert models.parse_spec("parrot:polly") == models.ParsedSpec("parrot", "polly")
    provider = models.create_provider("parrot:polly")
    assert provider is parrots[-1] and provider.spec == "parrot:polly"
    with pytest.raises(ValueError, match="already registered"):
        models.register("parrot", lambda model, settings: ParrotProvider(model))
    with pytest.raises(ValueError, match="lower-case"):
        models.register("Parrot!", lambda model, settings: ParrotProvider(model))
    with pytest.raises(ConfigError, match="has no <model> after 'parrot:'"):
        models.parse_spec("parrot:")


def test_unregister_removes_the_prefix_everywhere() -> None:
    models.register("gone", lambda model, settings: ParrotProvider(model))
    removed = models.unregister("gone")
    with pytest.raises(ConfigError) as err:
        models.parse_spec("gone:x")
    assert "gone" not in str(err.value.fix)
    models.restore(removed)
    assert models.parse_spec("gone:x").kind == "gone"
    models.unregister("gone")


async def test_a_profile_names_a_registered_prefix(
    parrots: list[ParrotProvider], workspace: Path
) -> None:
    write_profile(workspace, "parrot:polly")
    facade = AppFacade.open()
    try:
        outcome = await turn(facade, workspace, "crackers please")
        assert outcome.failure is None
        assert outcome.reply == "polly heard: crackers please"
        # the factory got the profile's settings, like a built-in backend
        assert parrots[-1].settings is not None and parrots[-1].settings.timeout_s == 7
        trace = await facade.context.trace("main")
        assert isinstance(trace, ContextAssembled) and trace.model == "parrot:polly"
    finally:
        await facade.aclose()
        facade.close()
    assert parrots[-1].closed  # a provider the registry built is the facade's to close


async def test_the_facade_takes_a_provider_instance_where_it_takes_a_spec(
    workspace: Path,
) -> None:
    write_profile(workspace, "openai:gpt-4o-mini")
    mine = ParrotProvider("own")
    facade = AppFacade.open(model=mine)
    try:
        first = await turn(facade, workspace, "hello")
        second = await turn(facade, workspace, "again")
        assert (first.reply, second.reply) == ("own heard: hello", "own heard: again")
        assert len(mine.requests) == 2
        assert await facade.chat.model("main") == "parrot:own"
    finally:
        await facade.aclose()
        facade.close()
    assert not mine.closed  # the caller made it, the caller closes it
