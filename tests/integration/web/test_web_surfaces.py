"""The web UI's first-hour details in a real Chromium: Markdown replies (safely), the wait for the
first token, status words, stale errors, decided cards, the dark theme, pills that keep their
shape, the inspector on the current session, and context items expanded to their text."""

from __future__ import annotations

from playwright.sync_api import expect
from webui import MakeUi, card, send, start_session

MARKDOWN = (
    "Here is **bold** and a list:\n\n- one\n- two\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "```python\ndef greet(name):\n    return f'hi {name}'\n```\n\n"
    "[bad](javascript:alert(1)) [data](data:text/html,<b>x</b>) [good](https://example.org/) "
    "![pixel](https://example.org/p.png) ![js](javascript:alert(2)) "
    "<img src=x onerror=alert(3)><script>alert(4)</script>"
)
UNTRUSTED = 'ok <memory scope="workspace" key="deploy.day">Deploys happen on Tuesdays.</memory>'


def test_replies_render_markdown_with_highlighting_and_nothing_active(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": MARKDOWN, "chunk": 7}])
    page = ui.page
    ui.open("/")
    start_session(page, "md")
    send(page, "show me markdown")
    reply = page.locator(".msg.assistant .text")
    expect(reply.locator("strong")).to_have_text("bold")
    expect(reply.locator("ul li")).to_have_count(2)
    expect(reply.locator("table td")).to_have_count(2)
    code = reply.locator("pre code")
    expect(code).to_contain_text("def greet(name):")
    expect(code.locator("span.hljs-keyword").first).to_have_text("def")
    # links only to http(s); no image is ever loaded; raw HTML stays text
    expect(reply.locator("a")).to_have_count(2)  # the https link and the linkified image URL
    expect(reply.locator('a[href^="javascript"], a[href^="data"]')).to_have_count(0)
    expect(reply.locator("a", has_text="good")).to_have_attribute("href", "https://example.org/")
    expect(reply.locator("a", has_text="good")).to_have_attribute(
        "rel", "noopener noreferrer nofollow"
    )
    expect(reply.locator("img, script, iframe")).to_have_count(0)
    expect(reply).to_contain_text("<img src=x onerror=alert(3)><script>alert(4)</script>")
    expect(reply).to_contain_text("[bad](javascript:alert(1))")


def test_a_spinner_and_status_words_until_the_first_token_and_stale_errors_clear(
    make_ui: MakeUi,
) -> None:
    ui = make_ui([{"hang": True}, {"error": "upstream exploded"}, {"text": "fine now"}])
    page = ui.page
    ui.open("/")
    start_session(page, "wait")
    send(page, "hello?")
    waiting = page.locator(".msg.assistant .waiting")
    expect(waiting).to_have_text("waiting for the model…")
    expect(waiting.locator(".spinner")).to_have_count(1)
    expect(page.locator("#session-state")).to_have_text("running a turn")
    page.click("#stop")
    expect(page.locator(".line.error")).to_contain_text("turn 1 failed")
    expect(page.locator(".msg.assistant .waiting")).to_have_count(0)
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator("#session-state")).to_have_text("")
    send(page, "again")
    expect(page.locator("#notice")).to_be_visible()
    expect(page.locator("#notice-text")).to_contain_text("upstream exploded")
    send(page, "and again")
    expect(page.locator(".msg.assistant .text").last).to_have_text("fine now")
    expect(page.locator("#notice")).to_be_hidden()  # the old error is gone


def test_a_decided_card_no_longer_asks_to_be_checked(make_ui: MakeUi) -> None:
    ui = make_ui(
        [
            {"tool_call": {"name": "read_file", "arguments": {"path": "notes.md"}}},
            {"text": UNTRUSTED},
        ]
    )
    (ui.server.options.workspace / "notes.md").write_text("Deploys happen on Tuesdays.\n")
    page = ui.page
    ui.open("/")
    start_session(page, "cards")
    send(page, "when do we deploy?")
    proposal = card(page, "deploy.day")
    expect(proposal.locator(".warning")).to_contain_text("Check it before approving.")
    proposal.locator("button.approve").click()
    expect(proposal.locator(".status")).to_contain_text("accepted")
    expect(proposal.locator(".warning")).to_contain_text("Proposed after untrusted input")
    expect(proposal.locator(".warning")).not_to_contain_text("Check it before approving")


def test_dark_theme_follows_the_system_and_pills_keep_their_shape(make_ui: MakeUi) -> None:
    long_key = "a.really.long.key.that.would.wrap.across.the.card.header.and.stretch.it.badly"
    ui = make_ui(
        [
            {
                "text": f'ok <memory scope="user" key="{long_key}">x</memory>'
                '<memory scope="session">A session fact.</memory>'
            }
        ]
    )
    page = ui.page
    page.emulate_media(color_scheme="dark")
    ui.open("/")
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(17, 20, 24)", background
    start_session(page, "pills")
    send(page, "remember")
    proposal = card(page, long_key)
    for pill in (proposal.locator(".badge"), proposal.locator("code.key")):
        style = pill.evaluate("(n) => getComputedStyle(n).whiteSpace")
        assert style == "nowrap"
    badge = proposal.locator(".badge").bounding_box()
    key = proposal.locator("code.key").bounding_box()
    assert badge is not None and key is not None
    assert badge["height"] < 30 and key["height"] < 30  # one line each, not stretched
    # a session badge is a pill too (it once took the sidebar's full-width session style)
    session_card = page.locator(".card.scope-session")
    session_badge = session_card.locator(".badge").bounding_box()
    session_header = session_card.locator("header").bounding_box()
    assert session_badge is not None and session_header is not None
    assert session_badge["width"] < session_header["width"] / 3
    assert session_card.locator(".status").bounding_box()["x"] < (  # type: ignore[index]
        session_header["x"] + session_header["width"]
    )
    page.emulate_media(color_scheme="light")
    light = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert light == "rgb(246, 247, 249)", light


def test_the_inspector_opens_on_the_current_session_and_items_expand(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": "one"}])  # each session replays the script from its first line
    page = ui.page
    ui.open("/")
    start_session(page, "first")
    send(page, "in first")
    expect(page.locator(".msg.assistant .text")).to_have_text("one")
    start_session(page, "second")
    send(page, "what the model saw")
    expect(page.locator(".msg.assistant .text")).to_have_text("one")
    page.click("#nav-context")
    expect(page.locator("#live")).to_have_attribute("data-status", "live")
    expect(page.locator("#c-session")).to_have_value("second")
    prompt_row = page.locator('#items tbody tr[data-source="prompt"]')
    prompt_row.locator("button.expand").click()
    expanded = page.locator("#items tr.item-text pre")
    expect(expanded).to_have_text("what the model saw")
    system_row = page.locator('#items tbody tr[data-source="system"]')
    system_row.locator("button.expand").click()
    expect(page.locator("#items tr.item-text pre").first).to_contain_text("You are Kairox")
    prompt_row.locator("button.expand").click()  # toggles closed
    expect(page.locator("#items tr.item-text")).to_have_count(1)
