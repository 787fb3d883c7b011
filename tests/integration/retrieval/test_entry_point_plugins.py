"""Installed packages add model backends, embedders and knowledge-base kinds through entry points
(the ``kairox.models``, ``kairox.embedders`` and ``kairox.knowledge_bases`` groups), as ``llm``
plugins are found: a distribution on the path declares them, and a fresh process finds them when
a config or a flag names one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import kx, write_config

PLUGIN = """
from kairox import models
from kairox.models.scripted import ScriptedProvider, ScriptLine
from kairox.retrieval import embeddings, knowledge_bases
from kairox.retrieval.embeddings.hashing import HashingEmbedder


class Toy:
    def __init__(self, kb_id):
        self.name = f"kb:{kb_id}"

    async def search(self, query, *, k):
        return []


embeddings.register("toyplug", lambda name, settings: HashingEmbedder(24))
knowledge_bases.register("toykb", lambda kb_id, config, env: Toy(kb_id))
models.register(
    "toymodel", lambda name, settings: ScriptedProvider([ScriptLine(text=f"toy {name}")]),
    networked=False,
)
"""


def install(site: Path, module: str, source: str, groups: dict[str, str]) -> None:
    """A distribution as pip leaves it: the module and a ``.dist-info`` with entry points."""
    site.mkdir(exist_ok=True)
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "".join(f"[{group}]\n{name} = {module}\n\n" for group, name in groups.items())
    )


@pytest.fixture
def site(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that has the plugin installed."""
    folder = tmp_path / "site"
    install(
        folder,
        "kx_toy_plugin",
        PLUGIN,
        {"kairox.embedders": "toy", "kairox.knowledge_bases": "toy", "kairox.models": "toy"},
    )
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


def test_an_installed_knowledge_base_kind_is_accepted_by_kb_list(
    site: dict[str, str], workspace: Path
) -> None:
    write_config(workspace, '[knowledge_bases.team]\nkind = "toykb"\n')
    assert kx("trust", str(workspace), env=site).returncode == 0
    listed = kx("kb", "list", "--workspace", str(workspace), "--json", env=site)
    assert listed.returncode == 0, listed.stderr
    assert [(e["id"], e["kind"]) for e in json.loads(listed.stdout)] == [("team", "toykb")]
    without = kx("kb", "list", "--workspace", str(workspace), "--json")
    assert without.returncode != 0 and "kind 'toykb' is unknown" in without.stderr


def test_an_installed_embedder_is_found_by_its_prefix(site: dict[str, str]) -> None:
    code = (
        "from kairox.retrieval.embeddings import create_embedder\n"
        "print(create_embedder('toyplug:any').dimensions)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **site},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "24"


def test_an_installed_model_backend_answers_by_its_prefix(
    site: dict[str, str], workspace: Path
) -> None:
    sent = kx("send", "--workspace", str(workspace), "--model", "toymodel:seven", "hi", env=site)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.strip() == "toy seven"
    without = kx("send", "--workspace", str(workspace), "--model", "toymodel:seven", "hi")
    assert without.returncode != 0 and "unknown model spec 'toymodel:seven'" in without.stderr


def test_a_broken_plugin_is_named_in_the_error_and_spares_the_others(
    tmp_path: Path, workspace: Path
) -> None:
    folder = tmp_path / "site"
    install(
        folder, "kx_broken", "raise RuntimeError('no licence')\n", {"kairox.knowledge_bases": "bad"}
    )
    install(folder, "kx_toy_plugin", PLUGIN, {"kairox.knowledge_bases": "toy"})
    env = {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    write_config(workspace, '[knowledge_bases.team]\nkind = "toykb"\n')
    assert kx("trust", str(workspace), env=env).returncode == 0
    assert kx("kb", "list", "--workspace", str(workspace), env=env).returncode == 0
    write_config(workspace, '[knowledge_bases.team]\nkind = "otherkb"\n')
    assert kx("trust", str(workspace), env=env).returncode == 0
    refused = kx("kb", "list", "--workspace", str(workspace), env=env)
    assert refused.returncode != 0
    assert "kind 'otherkb' is unknown" in refused.stderr
    assert "plugin 'bad' (kx_broken) failed to load: no licence" in refused.stderr
