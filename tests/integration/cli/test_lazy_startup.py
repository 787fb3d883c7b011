"""``kairox memory list`` starts without the runtime, the model providers or any heavy library.

The real command runs in a subprocess through a small wrapper that prints, after the command
has finished, which modules the process loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kairox.core.ids import workspace_id_for
from kairox.core.types import MemoryScope
from kairox.services import Services

WRAPPER = """
import json, sys
from kairox.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    if exc.code:
        raise
print("MODULES=" + json.dumps(sorted(sys.modules)))
"""

# Libraries a listing never needs; each costs tens to hundreds of milliseconds to import.
HEAVY = ("openai", "anthropic", "httpx", "numpy", "tiktoken", "textual", "fastapi", "llama_cpp")


def loaded_by(*args: str) -> tuple[str, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out, _, modules = proc.stdout.rpartition("MODULES=")
    return out, set(json.loads(modules))


def test_memory_list_loads_neither_the_runtime_nor_the_providers(
    kairox_home: Path, workspace: Path
) -> None:
    services = Services.open(kairox_home)
    try:
        services.memories.propose(
            MemoryScope.WORKSPACE,
            "style",
            "Tabs, not spaces.",
            workspace_id=workspace_id_for(workspace),
            session_id="ses_x",
            turn=1,
        )
    finally:
        services.close()
    out, modules = loaded_by("memory", "list", "--workspace", str(workspace))
    assert "Tabs, not spaces." in out  # the command really ran
    assert "kairox.cli.memory_cmd" in modules
    assert not {m for m in modules if m == "kairox.runtime" or m.startswith("kairox.runtime.")}
    assert not {m for m in modules if m == "kairox.models" or m.startswith("kairox.models.")}
    assert not {m for m in modules if m.split(".")[0] in HEAVY}
    # Only the command that runs is imported, not every command module.
    assert not {"kairox.cli.chat_cmd", "kairox.cli.tui_cmd", "kairox.cli.web_cmd"} & modules


def test_a_command_that_talks_to_a_model_still_loads_the_runtime(workspace: Path) -> None:
    script = workspace / "script.jsonl"
    script.write_text('{"text": "Hello."}\n')
    out, modules = loaded_by(
        "send", "--workspace", str(workspace), "--model", f"scripted:{script}", "hi"
    )
    assert "Hello." in out
    assert {"kairox.runtime.engine", "kairox.models.scripted"} <= modules
