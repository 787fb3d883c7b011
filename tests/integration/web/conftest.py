"""A real server (uvicorn on a free loopback port, in a thread) and Debian's Chromium (Playwright).

Each test starts its own server over the temp home with the scripted replies it needs, opens
the printed URL in a fresh browser context, and fails if the page throws or a dialog opens.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Dialog, expect, sync_playwright

from kairox.web import ServerOptions, WebServer

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from webui import MakeUi, Ui  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def make_ui(
    browser: Browser, kairox_home: Path, workspace: Path, tmp_path: Path
) -> Iterator[MakeUi]:
    servers: list[WebServer] = []
    contexts: list[BrowserContext] = []
    made: list[Ui] = []

    def make(replies: list[dict[str, object]], *, config: str | None = None) -> Ui:
        script = tmp_path / f"script-{len(servers)}.jsonl"
        script.write_text("".join(json.dumps(r) + "\n" for r in replies), encoding="utf-8")
        if config is not None:
            (workspace / ".kairox").mkdir(exist_ok=True)
            (workspace / ".kairox" / "config.toml").write_text(config, encoding="utf-8")
        options = ServerOptions(
            workspace=workspace,
            port=0,
            home=kairox_home,
            model=f"scripted:{script}",
            poll_s=0.05,
            heartbeat_s=1.0,
        )
        server = WebServer(options).start()
        servers.append(server)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        ui = Ui(server=server, page=page, home=kairox_home)

        def on_dialog(dialog: Dialog) -> None:
            ui.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("pageerror", lambda exc: ui.errors.append(str(exc)))
        made.append(ui)
        return ui

    try:
        yield make
    finally:
        for context in contexts:
            context.close()
        for server in servers:
            server.stop()
    for ui in made:
        assert ui.dialogs == [], f"a dialog opened: {ui.dialogs}"
        assert ui.errors == [], f"the page threw: {ui.errors}"
