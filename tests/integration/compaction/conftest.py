"""Fixtures: a facade per test on the test's home, and gated providers."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from compaction_chat import Chat, Gate, GatedProvider, OpenChat

from kairox import models
from kairox.app import AppFacade
from kairox.models import Backend, ModelProvider, ProviderSettings, Purpose


@pytest.fixture
async def open_chat(workspace: Path, kairox_home: Path) -> AsyncIterator[OpenChat]:
    facades: list[AppFacade] = []

    async def make(name: str = "c", *, model: str | None = None) -> Chat:
        facade = AppFacade.open(kairox_home, model=model)
        facades.append(facade)
        await facade.chat.open(name, workspace=workspace)
        return Chat(facade, name)

    yield make
    for facade in facades:
        await facade.aclose()
        facade.close()


@pytest.fixture
def gate() -> Iterator[Callable[[set[Purpose]], Gate]]:
    """Every provider the engine builds from now on records its requests, and holds calls of
    the given purposes until ``gate.open`` is set: each registered backend is re-registered
    wrapped, and put back afterwards."""
    replaced: list[Backend] = []

    def install(purposes: set[Purpose]) -> Gate:
        shared = Gate(purposes)
        for prefix in models.prefixes():
            real = models.backend(prefix)

            def create(
                argument: str, settings: ProviderSettings, real: Backend = real
            ) -> ModelProvider:
                return GatedProvider(real.factory(argument, settings), shared)

            models.restore(dataclasses.replace(real, factory=create))
            replaced.append(real)
        return shared

    yield install
    for backend in reversed(replaced):
        models.restore(backend)
