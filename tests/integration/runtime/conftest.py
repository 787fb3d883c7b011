from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

Script = Callable[..., str]


@pytest.fixture
def script(tmp_path: Path) -> Script:
    """Write a scripted-model JSON Lines file and return its ``scripted:`` spec."""
    counter = {"n": 0}

    def make(*lines: dict[str, object]) -> str:
        counter["n"] += 1
        path = tmp_path / f"script{counter['n']}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return f"scripted:{path}"

    return make
