"""Text from the model, files or the store reaches a terminal with its control characters made
visible: OSC 52 (clipboard write), OSC 8 (hidden links), CSI, ``\\r`` and bidi controls are shown
as escapes, never obeyed. JSON output keeps them escaped (issue 21, Medium)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harden_fakes import Kx

from kairox.app import AppFacade
from kairox.core.terminal import visible
from kairox.core.types import MemoryScope

HOSTILE = (
    "\x1b]52;c;ZXZpbA==\x07clip \x1b]8;;http://evil.example\x07link\x1b]8;;\x07 "
    "\rover \u202eevil \x9b31m \u2028sep"
)
OBEYED = ("\x1b", "\x07", "\r", "\u202e", "\x9b", "\u2028")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def assert_inert(text: str) -> None:
    for char in OBEYED:
        assert char not in text, repr(char)


def test_visible_shows_every_control_character() -> None:
    shown = visible(HOSTILE)
    assert_inert(shown)
    assert "\\x1b]52;c;ZXZpbA==\\x07clip" in shown and "\\u202eevil" in shown
    assert "\\rover" in shown and "\\x9b31m" in shown
    assert visible("two\nlines\ttab") == "two\nlines\ttab"
    assert visible("two\nlines", one_line=True) == "two\\nlines"


def test_send_streams_the_reply_with_escapes_visible(
    workspace: Path, kx: Kx, script: Callable[..., str]
) -> None:
    result = kx("send", "--workspace", str(workspace), "--model", script({"text": HOSTILE}), "hi")
    assert result.returncode == 0, result.stderr
    assert_inert(result.stdout)
    assert "\\x1b]52;c;ZXZpbA==\\x07clip" in result.stdout

    as_json = kx("send", "--workspace", str(workspace), "--session", "j", "--json",
                 "--model", script({"text": HOSTILE}), "hi")  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    assert_inert(as_json.stdout)
    assert json.loads(as_json.stdout)["reply"] == HOSTILE  # escaped in JSON, intact when parsed


async def test_memory_list_show_and_events_print_bodies_inert(
    workspace: Path, kairox_home: Path, kx: Kx
) -> None:
    facade = AppFacade.open(kairox_home)
    try:
        routed = await facade.memory.propose(
            workspace=workspace, session=None, scope=MemoryScope.USER, key="k", body=HOSTILE
        )
    finally:
        facade.close()
    for args in (
        ("memory", "list", "--workspace", str(workspace)),
        ("memory", "show", routed.record.id),
        ("memory", "history", routed.record.id),
        ("events",),
    ):
        result = kx(*args)
        assert result.returncode == 0, result.stderr
        assert_inert(result.stdout)
        assert "\\x1b]52" in result.stdout or "\\u001b]52" in result.stdout, args
    for args in (("memory", "list", "--workspace", str(workspace), "--json"), ("events", "--json")):
        result = kx(*args)
        assert_inert(result.stdout)
        assert HOSTILE in _strings(json.loads(result.stdout))  # intact once parsed
