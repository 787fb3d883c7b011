"""A model that does not follow the memory protocol says once what memory does with it under the
``extract`` mode that is on (issue 37): with ``after_turn``, what the extra call costs and what
to pull instead; never "does not propose memories" while an extraction call runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairox import AppFacade
from kairox.app import TurnDone
from kairox.core.config import ExtractMode
from kairox.core.events import ModelNotice
from kairox.models.local import LocalProvider, demo_notice
from kairox.models.scripted import ScriptedProvider, ScriptLine


class NoProtocolModel(ScriptedProvider):
    """A scripted model with the demo model's notices (it does not follow the protocol)."""

    def notice_for(self, extract: ExtractMode) -> str | None:
        return demo_notice(extract)


def test_the_demo_notice_says_what_each_mode_does() -> None:
    after = demo_notice("after_turn")
    assert 'extract = "after_turn"' in after and "second call" in after
    assert "kairox models pull qwen2.5-coder-0.5b-instruct" in after
    assert 'set extract = "inline"' in after and "does not propose" not in after
    assert 'extraction is off (extract = "off")' in demo_notice("off")
    inline = demo_notice("inline")
    assert "demo model" in inline and "kairox models pull" in inline and "Ollama" in inline
    provider = LocalProvider()  # the bundled SmolLM2; nothing loads until a call
    assert provider.notice_for("after_turn") == after and provider.notice == inline


async def _notices(facade: AppFacade, workspace: Path, *texts: str) -> list[str]:
    info = await facade.chat.open("s", workspace=workspace)
    seen: list[str] = []
    for text in texts:
        async for update in facade.chat.send(info.id, text):
            if not isinstance(update, TurnDone) and isinstance(update.payload, ModelNotice):
                seen.append(update.payload.text)
    return seen


@pytest.mark.parametrize("mode", ["inline", "after_turn"])
async def test_the_notice_of_the_mode_that_is_on_is_said_once(
    mode: ExtractMode,
    workspace: Path,
    kairox_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = tmp_path / "user.toml"
    user.write_text(f'[memory]\nextract = "{mode}"\n', encoding="utf-8")
    monkeypatch.setenv("KAIROX_CONFIG", str(user))
    lines = [ScriptLine(text="Hi."), ScriptLine(text="Hello again.")]
    lines += [ScriptLine(text="", purpose="extraction")] * 2
    provider = NoProtocolModel(lines)
    with AppFacade.open(kairox_home, model=provider) as facade:
        try:
            seen = await _notices(facade, workspace, "hello", "and again")
        finally:
            await facade.aclose()
    assert seen == [demo_notice(mode)]
