"""One config cache, one tokenizer registry and one retrieval ``SourceCache`` per facade, shared
by every area and the runtime; ``facade.config`` is how a surface reads the config."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import write_config
from kairox.app import AppFacade, TurnDone


async def test_chat_and_search_share_one_workspace_index(
    kairox_home: Path, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("Deploys go out on Tuesdays after the review.\n")
    script = workspace.parent / "script.jsonl"
    script.write_text('{"text": "Tuesdays."}\n')
    write_config(workspace, f'default_profile = "s"\n[profiles.s]\nmodel = "scripted:{script}"\n')
    facade = AppFacade.open(kairox_home)
    try:
        await facade.retrieval.index(workspace)
        hits, _ = await facade.retrieval.search("deploys", workspace=workspace)
        assert hits
        await facade.chat.open("c", workspace=workspace)
        outcomes = [u async for u in facade.chat.send("c", "when do deploys go out?")]
        assert isinstance(outcomes[-1], TurnDone) and outcomes[-1].outcome.failure is None
        engine = facade.chat._engine
        assert engine.sources is facade.sources
        assert engine.resolver.configs is facade.configs
        assert engine.resolver.tokenizers is facade.tokenizers
        assert len(facade.sources._indexes) == 1  # one vector matrix, not one per area
    finally:
        await facade.aclose()
        facade.close()


def test_config_is_cached_and_reloaded_when_the_file_changes(
    kairox_home: Path, workspace: Path
) -> None:
    write_config(workspace, '[profiles.a]\nmodel = "scripted:first.jsonl"\n')
    with AppFacade.open(kairox_home) as facade:
        first = facade.config(workspace)
        assert facade.config(workspace) is first
        assert first.config.profiles["a"].model == "scripted:first.jsonl"
        write_config(workspace, '[profiles.a]\nmodel = "scripted:second.jsonl"\n')
        path = workspace / ".kairox" / "config.toml"
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        again = facade.config(workspace)
        assert again is not first
        assert again.config.profiles["a"].model == "scripted:second.jsonl"
