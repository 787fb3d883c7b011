"""An untrusted repository picks no model file and no networked backend (issue 33, High and
Medium): only plain ``local`` and ``local:NAME`` of a model pulled into the home's ``models/``;
a backend registered as networked (``kairox.models.register``) or a prefix nobody registered is
refused like ``openai:``; a refused model falls back to the user's with the one-line warning.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harden_fakes import Kx

from kairox import models
from kairox.app.facade import describe_model
from kairox.core.config_load import LoadedConfig, load_config
from kairox.models import ModelProvider, ProviderSettings
from kairox.models.scripted import ScriptedProvider, ScriptLine


def _repo(workspace: Path, text: str) -> None:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)


def _load(workspace: Path, home: Path, user: Path) -> LoadedConfig:
    return load_config(workspace, user_file=user, home=home, describe=describe_model)


def _pull(home: Path, name: str) -> Path:
    """A model as ``kairox models pull`` leaves it: ``NAME.gguf`` beside ``NAME.json``."""
    root = home / "models"
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.json").write_text("{}")
    gguf = root / f"{name}.gguf"
    gguf.write_bytes(b"GGUF")
    return gguf


@pytest.mark.parametrize(
    "spec",
    [
        "local:/anywhere/evil.gguf",
        "local:payload.gguf",  # a file the repository ships, resolved against the current dir
        "local:payload",
        "local:../payload.gguf",
        "local:{home}/models/mine.gguf",  # a path, even one into the home, is not a pulled name
        "local:notpulled",
    ],
)
def test_a_repo_may_not_pick_a_model_file(
    spec: str, tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    _pull(kairox_home, "mine")
    (workspace / "payload.gguf").write_bytes(b"GGUF evil")
    (workspace / "payload").write_bytes(b"GGUF evil")
    user = tmp_path / "user.toml"
    user.write_text('[profiles.local]\nmodel = "local"\n')
    _repo(workspace, f'[profiles.local]\nmodel = "{spec.format(home=kairox_home)}"\n')
    loaded = _load(workspace, kairox_home, user)
    assert loaded.config.profiles["local"].model == "local"
    assert "profiles.local.model" in loaded.ignored


def test_a_repo_may_pick_local_or_a_pulled_model_by_name(
    tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    _pull(kairox_home, "mine")
    user = tmp_path / "user.toml"
    user.write_text("")
    _repo(workspace, '[profiles.local]\nmodel = "local:mine"\n[profiles.b]\nmodel = "local"\n')
    loaded = _load(workspace, kairox_home, user)
    assert loaded.config.profiles["local"].model == "local:mine"
    assert loaded.config.profiles["b"].model == "local"
    assert loaded.ignored == ()


@pytest.fixture
def groq() -> Iterator[list[str]]:
    """A networked backend of a third party under a new prefix; records what it was built for."""
    built: list[str] = []

    def factory(model: str, settings: ProviderSettings) -> ModelProvider:
        built.append(model)
        return ScriptedProvider([ScriptLine(text="from groq")])

    models.register("groqx", factory, networked=True)
    yield built
    models.unregister("groqx")


def test_a_registered_networked_backend_is_refused_to_an_untrusted_repo(
    groq: list[str], tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    user = tmp_path / "user.toml"
    user.write_text("")
    _repo(
        workspace,
        'default_profile = "fast"\n[profiles.fast]\nmodel = "groqx:llama-70b"\n'
        '[profiles.local]\nmodel = "groqx:llama-8b"\n',
    )
    loaded = _load(workspace, kairox_home, user)
    assert "fast" not in loaded.config.profiles
    assert loaded.config.default_profile == "local"
    assert loaded.config.profiles["local"].model == "local"
    assert {"profiles.fast", "default_profile", "profiles.local.model"} <= set(loaded.ignored)

    # The user who chose that backend for a profile lets the repository pick another of its models.
    user.write_text('[profiles.fast]\nmodel = "groqx:llama-8b"\n')
    _repo(workspace, '[profiles.fast]\nmodel = "groqx:llama-70b"\n')
    assert _load(workspace, kairox_home, user).config.profiles["fast"].model == "groqx:llama-70b"


def test_a_backend_registered_as_local_may_be_chosen(
    tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    models.register("echox", lambda m, s: ScriptedProvider([ScriptLine(text=m)]), networked=False)
    try:
        user = tmp_path / "user.toml"
        user.write_text("")
        _repo(workspace, '[profiles.local]\nmodel = "echox:hi"\n')
        loaded = _load(workspace, kairox_home, user)
        assert (loaded.config.profiles["local"].model, loaded.ignored) == ("echox:hi", ())
    finally:
        models.unregister("echox")


def test_an_unknown_prefix_counts_as_networked(
    tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    user = tmp_path / "user.toml"
    user.write_text("")
    _repo(workspace, '[profiles.local]\nmodel = "mystery:m"\n')
    loaded = _load(workspace, kairox_home, user)
    assert loaded.config.profiles["local"].model == "local"
    assert loaded.ignored == ("profiles.local.model",)


def test_a_refused_model_falls_back_to_the_users_with_the_warning(
    tmp_path: Path, workspace: Path, kx: Kx, script: object
) -> None:
    user = tmp_path / "user.toml"
    user.write_text("")
    _repo(workspace, '[profiles.local]\nmodel = "openai:gpt-4o-mini"\ncontext_window = 4096\n')
    env = {"KAIROX_CONFIG": str(user)}
    listed = kx("memory", "list", "--workspace", str(workspace), env=env)
    assert listed.returncode == 0, listed.stderr
    shown = kx("config", "show", "--workspace", str(workspace), env=env)
    assert shown.returncode == 0, shown.stderr
    assert "profiles.local.model" in shown.stdout + shown.stderr
    loaded = load_config(workspace, user_file=user, describe=describe_model)
    local = loaded.config.profiles["local"]
    assert (local.model, local.context_window) == ("local", 4096)
    assert loaded.source_of("profiles.local.model") == "defaults"
