"""Fixtures: a facade per test on the test's home, and gated providers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from compaction_chat import Chat, Gate, GatedProvider, OpenChat

import kairox.runtime.setup as setup_module
from kairox.app import AppFacade
from kairox.models import ModelProvider, Purpose


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
def gate(monkeypatch: pytest.MonkeyPatch) -> Callable[[set[Purpose]], Gate]:
    """Every provider the engine builds from now on records its requests, and holds calls of
    the given purposes until ``gate.open`` is set."""

    def install(purposes: set[Purpose]) -> Gate:
        shared = Gate(purposes)
        real = setup_module.create_provider

        def create(spec: str, **kwargs: object) -> ModelProvider:
            return GatedProvider(real(spec, **kwargs), shared)  # type: ignore[arg-type]

        monkeypatch.setattr(setup_module, "create_provider", create)
        return shared

    return install
