"""``make screenshots``: the web UI screenshots of docs/screenshots/, from a tidy demo workspace.

Not a test: tests never write these files. It builds a small project at ``~/acme-app`` (so the
header shows a real-looking path, not a temporary one; it refuses to touch an existing
directory and removes what it made), a home in a temporary directory, a scripted model, starts
the real server and drives Debian's Chromium through a short session, then writes chat.png,
chat-dark.png, chat-phone.png (390 px wide), memory.png and context.png.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

from kairox.web import ServerOptions, WebServer

OUT = Path(__file__).resolve().parents[3] / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FILES = {
    "README.md": "# acme-app\n\nA small web shop. Deploys go out on Tuesdays.\n",
    "src/shop/cart.py": "def total(items: list[float]) -> float:\n"
    "    return round(sum(items), 2)\n",
    "docs/release.md": "# Releasing\n\nCut releases from main every second Tuesday.\n",
}
REPLIES = [
    {
        "text": "Sure. Here is how the cart total works:\n\n"
        "```python\ndef total(items: list[float]) -> float:\n"
        "    return round(sum(items), 2)\n```\n\n"
        "- it sums the item prices\n- and rounds to cents\n\n"
        '<memory scope="user" key="style.answers">Prefers short answers with code.</memory>'
        '<memory scope="session">We are looking at the cart module.</memory>',
        "chunk": 12,
    },
    {
        "text": "| step | when |\n|---|---|\n| cut release | every second Tuesday |\n"
        "| deploy | Tuesdays |\n\nSee `docs/release.md`.",
        "chunk": 12,
    },
]


def wait_live(page: Page) -> None:
    expect(page.locator("#live")).to_have_attribute("data-status", "live")


def shoot(page: Page, name: str) -> None:
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
    print(f"wrote {OUT / name}.png")


def main() -> None:
    workspace = Path.home() / "acme-app"
    if workspace.exists():
        sys.exit(f"{workspace} exists; move it away first (the screenshots need a fresh one)")
    tmp = Path(tempfile.mkdtemp(prefix="kairox-shots-"))
    try:
        for rel, text in FILES.items():
            (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
            (workspace / rel).write_text(text)
        script = workspace / ".kairox" / "demo-model.jsonl"  # no temporary path on screen
        script.parent.mkdir()
        script.write_text("".join(json.dumps(r) + "\n" for r in REPLIES))
        options = ServerOptions(
            workspace=workspace, port=0, home=tmp / "home", model=f"scripted:{script}"
        )
        OUT.mkdir(parents=True, exist_ok=True)
        with WebServer(options) as server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
            page.goto(server.url)
            wait_live(page)
            page.fill("#new-session-name", "main")
            page.click("#start-session")
            expect(page.locator("#session-title")).to_have_text("main")
            page.fill("#message", "How does the cart total work?")
            page.click("#send")
            expect(page.locator(".card .key", has_text="style.answers")).to_be_visible()
            page.fill("#message", "When do we release?")
            page.click("#send")
            expect(page.locator(".msg.assistant table")).to_be_visible()
            expect(page.locator("#send")).to_be_enabled()
            expect(page.locator("#session-state")).to_have_text("")
            shoot(page, "chat")
            page.emulate_media(color_scheme="dark")
            shoot(page, "chat-dark")
            page.emulate_media(color_scheme="light")
            page.set_viewport_size({"width": 390, "height": 844})
            page.screenshot(path=str(OUT / "chat-phone.png"))  # the screen, not the whole page
            print(f"wrote {OUT / 'chat-phone'}.png")
            page.set_viewport_size({"width": 1280, "height": 860})
            page.locator('.card[data-status="pending"] button.approve').first.click()
            expect(
                page.locator(".card", has_text="style.answers").locator(".status")
            ).to_contain_text("accepted")
            page.click("#nav-memory")
            wait_live(page)
            expect(page.locator(".memory-row").first).to_be_visible()
            shoot(page, "memory")
            page.click("#nav-context")
            wait_live(page)
            expect(page.locator("#c-session")).to_have_value("main")
            page.locator("#items tbody tr button.expand").first.click()
            expect(page.locator("#items tr.item-text pre")).to_be_visible()
            shoot(page, "context")
            browser.close()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
