"""The chat page as a person first meets it (issue 26): a readable header in light and dark, a
session already open, a layout that fits the window and a 390 px phone, a state label that
follows the API, and cards that follow every memory event.
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect
from webui import MakeUi, card, send, start_session

FONT = 'Sure. <memory scope="user" key="editor.font">JetBrains Mono</memory> Noted.'
PHONE = {"width": 390, "height": 844}
LONG_WORD = "supercalifragilistic" * 6


def _rgb(css: str) -> tuple[float, float, float]:
    parts = [float(p) for p in re.findall(r"[\d.]+", css)[:3]]
    return parts[0], parts[1], parts[2]


def _luminance(css: str) -> float:
    def channel(v: float) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in _rgb(css))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(page: Page, selector: str) -> float:
    style = page.eval_on_selector(
        selector,
        "(el) => { const s = getComputedStyle(el);"
        " return [s.color, getComputedStyle(el.closest('.top')).backgroundColor]; }",
    )
    fg, bg = (_luminance(c) for c in style)
    light, dark = max(fg, bg), min(fg, bg)
    return (light + 0.05) / (dark + 0.05)


def test_the_header_is_readable_in_light_and_dark(make_ui: MakeUi) -> None:
    ui = make_ui([])
    page = ui.page
    ui.open("/")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for selector in (".top .brand", "#nav-chat", ".top .workspace"):
            ratio = _contrast(page, selector)
            assert ratio >= 4.5, f"{scheme}: {selector} contrast {ratio:.1f} on the header"


def test_the_page_opens_main_and_the_context_page_follows_the_chat(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": "hello there"}])
    page = ui.page
    ui.open("/")
    start_session(page, "alpha")
    start_session(page, "main")
    start_session(page, "zeta")

    ui.open("/")  # no ?session= in the address: the workspace's main is open
    expect(page.locator("#session-title")).to_have_text("main")
    send(page, "hi")
    expect(page.locator(".msg.assistant .text")).to_have_text("hello there")
    expect(page.locator("#notice")).to_be_hidden()

    page.click("#nav-context")  # the session being chatted in, not the first one
    expect(page.locator("#live")).to_have_attribute("data-status", "live")
    expect(page.locator("#c-session")).to_have_value("main")
    ui.open("/context")
    expect(page.locator("#c-session")).to_have_value("main")


def test_without_main_the_most_recent_session_opens(make_ui: MakeUi) -> None:
    ui = make_ui([])
    page = ui.page
    ui.open("/")
    start_session(page, "alpha")
    start_session(page, "zeta")
    ui.open("/")
    expect(page.locator("#session-title")).to_have_text("zeta")
    ui.open("/context")
    expect(page.locator("#c-session")).to_have_value("zeta")


def test_the_first_message_of_a_new_workspace_starts_main(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": "welcome"}])
    page = ui.page
    ui.open("/")
    send(page, "hello")
    expect(page.locator("#session-title")).to_have_text("main")
    expect(page.locator(".msg.assistant .text")).to_have_text("welcome")
    expect(page.locator("#notice")).to_be_hidden()


def _box(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not on screen"
    return box


def test_the_chat_fills_the_window_and_fits_a_phone(make_ui: MakeUi, tmp_path: Path) -> None:
    ui = make_ui([{"text": f"A reply with a long word: {LONG_WORD}"}])
    page = ui.page
    page.set_viewport_size({"width": 1280, "height": 1000})
    ui.open("/")
    start_session(page, "demo")
    composer = _box(page, "#composer")
    assert composer["y"] + composer["height"] >= 1000 - 40, "the chat does not fill the window"

    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.set_viewport_size(PHONE)
        if scheme == "light":
            send(page, f"a question with {LONG_WORD}")
            expect(page.locator(".msg.assistant .text")).to_contain_text("long word")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{scheme}: the page scrolls sideways ({width} px)"
        for selector in ("#transcript", ".msg.user", ".msg.assistant", "#composer", "#send"):
            box = _box(page, selector)
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], selector
        composer = _box(page, "#composer")
        assert composer["y"] + composer["height"] <= PHONE["height"], "the composer is cut off"
        assert _box(page, "#transcript")["height"] >= 300, "the transcript has no room"
        shot = tmp_path / f"phone-{scheme}.png"
        page.screenshot(path=str(shot))
        assert shot.read_bytes()[16:24] == (390).to_bytes(4, "big") + (844).to_bytes(4, "big")

    page.emulate_media(color_scheme="light")
    before = _box(page, "#message")["height"]
    page.fill("#message", "\n".join(f"line {n}" for n in range(6)))
    grown = _box(page, "#message")["height"]
    assert grown > before + 30, f"the composer did not grow ({before} -> {grown})"
    page.fill("#message", "short")
    assert _box(page, "#message")["height"] < grown


def test_the_state_label_follows_the_api_after_another_page_ends_the_turn(
    make_ui: MakeUi,
) -> None:
    ui = make_ui([{"deltas": ["Thinking"], "hang": True}])
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    other = page.context.new_page()
    other.goto(ui.server.base_url + "/?session=demo")
    expect(other.locator("#session-title")).to_have_text("demo")

    send(page, "a long job")
    expect(other.locator(".msg.assistant .text")).to_have_text("Thinking")
    other.goto(ui.server.base_url + "/?session=demo")
    expect(other.locator("#session-state")).to_have_text("running a turn")

    page.click("#stop")  # the turn ends on the first page; the second is told nothing
    expect(page.locator("#send")).to_be_enabled()
    expect(other.locator("#session-state")).to_have_text("")


def test_cards_follow_restore_and_a_rejection_reads_once(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": FONT}, {"text": FONT.replace("JetBrains Mono", "Comic Sans")}])
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "font?")
    first = card(page, "editor.font").first
    first.locator("button.approve").click()
    expect(first.locator(".status")).to_have_text("accepted · by user")
    memory_id = first.get_attribute("data-memory-id")
    assert memory_id

    ui.kairox("memory", "delete", memory_id)
    expect(first.locator(".status")).to_have_text("deleted · by user")
    ui.kairox("memory", "undo", memory_id)
    expect(first).to_have_attribute("data-status", "accepted")
    expect(first.locator(".status")).to_have_text("accepted · by user")

    send(page, "no, another font")
    second = page.locator('.card[data-status="pending"]')
    expect(second).to_have_count(1)
    second.locator("button.reject").click()
    rejected = page.locator('.card[data-status="rejected"]')
    expect(rejected).to_have_count(1)
    ui.open("/?session=demo")  # from the history, as from the live event
    expect(page.locator('.card[data-status="rejected"] .status')).to_have_text("rejected · by user")


def test_the_memory_browser_shows_a_key_once_with_its_rejected_proposal_in_its_history(
    make_ui: MakeUi,
) -> None:
    comic = FONT.replace("JetBrains Mono", "Comic Sans")
    ui = make_ui([{"text": comic}, {"text": FONT}])
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "font?")
    page.locator('.card[data-status="pending"] button.reject').click()
    expect(page.locator('.card[data-status="rejected"]')).to_have_count(1)
    send(page, "no, a readable one")
    page.locator('.card[data-status="pending"] button.approve').click()
    expect(page.locator('.card[data-status="accepted"]')).to_have_count(1)

    ui.open("/memory")
    page.select_option("#f-status", "")  # every status
    rows = page.locator(".memory-row")
    expect(rows).to_have_count(1)
    expect(rows.first.locator(".status")).to_have_text("accepted")
    expect(rows.first.locator(".version")).to_have_text("v1")  # a new memory is v1
    rows.first.locator("button.history-toggle").click()
    history = rows.first.locator(".history li")
    expect(history.filter(has_text="reject")).to_contain_text("Comic Sans")
    expect(history.filter(has_text="reject")).not_to_contain_text("v1")  # no version of it
    expect(history.last).to_contain_text("JetBrains Mono")
    # Asked for rejected memories, the proposal is listed, its decision said once.
    page.select_option("#f-status", "rejected")
    expect(rows).to_have_count(1)
    expect(rows.first.locator(".body")).to_have_text("Comic Sans")
    expect(rows.first.locator(".provenance")).to_contain_text("decided by user")
    expect(rows.first.locator(".provenance")).not_to_contain_text("rejected by the user")
