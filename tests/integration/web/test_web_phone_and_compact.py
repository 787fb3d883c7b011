"""The web UI a newcomer reads (issue 37): at 390 px the context inspector's budget chart keeps
readable text and an item's id wraps at the screen's width; "Compact now" says what happened;
the session list names the model that answered."""

from __future__ import annotations

from playwright.sync_api import expect
from webui import MakeUi, send, start_session

PHONE = {"width": 390, "height": 844}
FONT = 'Sure. <memory scope="session">We are looking at the cart module.</memory>'


def test_the_context_inspector_reads_well_at_390_px(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": FONT}, {"text": "Deploys go out on Tuesdays."}])
    page = ui.page
    page.set_viewport_size(PHONE)
    ui.open("/")
    start_session(page, "main")
    send(page, "How does the cart total work?")
    expect(page.locator(".card .status")).to_contain_text("accepted")
    send(page, "When do we deploy?")
    expect(page.locator(".msg.assistant .text").nth(1)).to_contain_text("Tuesdays")
    ui.open("/context?session=main")
    expect(page.locator("#c-session")).to_have_value("main")
    expect(page.locator("#budget-chart")).to_be_visible()
    # The chart's labels render at their 12 px, not scaled down to fit a 720-unit drawing.
    heights = page.eval_on_selector_all(
        "#budget-chart text.label", "(ts) => ts.map((t) => t.getBoundingClientRect().height)"
    )
    assert heights and min(heights) >= 11, heights
    labels = page.eval_on_selector_all(
        "#budget-chart text.label",
        "(ts) => ts.map((t) => t.getBoundingClientRect().right)",
    )
    bars = page.eval_on_selector_all(
        "#budget-chart rect.track", "(rs) => rs.map((r) => r.getBoundingClientRect().left)"
    )
    assert max(labels) <= min(bars), (labels, bars)  # no label runs into its bar
    # The memory's id wraps at the screen's width, not a few characters a line.
    memory = page.locator("#items tbody tr[data-source='memory'] td.ref")
    expect(memory).to_contain_text("mem:mem_")
    box = memory.bounding_box()
    assert box is not None and box["width"] >= 300 and box["height"] <= 60, box
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width  # nothing scrolls sideways
    assert page.evaluate("document.documentElement.scrollHeight") < 1_600


def test_compact_now_says_it_skipped_and_why_and_the_list_names_the_model(
    make_ui: MakeUi,
) -> None:
    ui = make_ui([{"text": "Hello."}])
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    entry = page.locator("#sessions button.session", has_text="demo")
    expect(entry.locator(".session-model")).to_have_count(0)  # no reply yet
    send(page, "hi")
    expect(page.locator(".msg.assistant .text").first).to_contain_text("Hello.")
    answered = entry.locator(".session-model")
    expect(answered).to_have_text(f"· {ui.server.options.model}")
    page.reload()
    expect(page.locator("#live")).to_have_attribute("data-status", "live")
    expect(entry.locator("small")).to_have_text(" local")  # the profile, then the model
    expect(answered).to_have_attribute(
        "title", f"profile local, answered by {ui.server.options.model}"
    )
    page.click("#menu summary")
    page.click("#compact")
    expect(page.locator("#compact-status")).to_have_text(
        "compaction skipped: nothing to compact: only the latest turn is not summarised yet"
    )
