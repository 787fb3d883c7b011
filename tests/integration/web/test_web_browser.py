"""The web UI in a real headless Chromium: chat, proposal cards, memory browser, context inspector.

Covers a streamed reply, approving (also after an edit) and rejecting cards, edit then undo (Undo
offered only where it applies), an XSS body that stays text, CLI changes from another process
appearing live, the context chart, compaction queued behind a running turn. (The screenshots come
from ``make screenshots``.)
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from playwright.sync_api import FilePayload, expect
from webui import MakeUi, card, memory_row, send, start_session

from kairox.app import AppFacade
from kairox.core.ids import workspace_id_for

FONT = 'Sure. <memory scope="user" key="editor.font">JetBrains Mono</memory> Noted for next time.'
XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"
COUNT_TEXT_MUTATIONS = """() => {
window.__textMutations = 0;
new MutationObserver((records) => {
  for (const r of records) {
    if (r.target.closest && r.target.closest('.msg.assistant .text')) window.__textMutations++;
  }
}).observe(document.getElementById('transcript'), {childList: true, subtree: true});
}"""


def test_streamed_reply_then_approve_a_card_and_see_it_in_the_memory_browser(
    make_ui: MakeUi,
) -> None:
    ui = make_ui([{"text": FONT, "chunk": 3, "pause_ms": 60}])  # slower than the 50 ms batching
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    page.evaluate(COUNT_TEXT_MUTATIONS)
    send(page, "I like JetBrains Mono")

    reply = page.locator(".msg.assistant .text")
    expect(reply).to_have_text("Sure.  Noted for next time.")
    # Many small appends, not one final write: the reply streamed in.
    assert page.evaluate("() => window.__textMutations") >= 5
    expect(page.locator(".msg.user .text")).to_have_text("I like JetBrains Mono")

    proposal = card(page, "editor.font")
    expect(proposal.locator(".badge")).to_have_text("user")
    expect(proposal.locator(".body")).to_have_text("JetBrains Mono")
    expect(proposal.locator(".status")).to_have_text("pending")
    proposal.locator("button.approve").click()
    expect(proposal.locator(".status")).to_have_text("accepted · by user")
    expect(proposal.locator(".actions")).to_be_hidden()

    page.click("#nav-memory")
    ui.open("/memory")
    row = memory_row(page, "editor.font")
    expect(row.locator(".body")).to_have_text("JetBrains Mono")
    expect(row.locator(".status")).to_have_text("accepted")
    expect(row.locator(".provenance")).to_contain_text("proposed in session demo, turn 1")
    expect(row.locator(".provenance")).to_contain_text("decided by user")


RECORD_STREAM = """() => {
window.__received = [];
window.__posted = [];
const listen = EventSource.prototype.addEventListener;
EventSource.prototype.addEventListener = function (type, listener, options) {
  const recording = (msg) => {
    if (msg.lastEventId) window.__received.push([Number(msg.lastEventId), type]);
    return listener(msg);
  };
  return listen.call(this, type, recording, options);
};
const fetching = window.fetch;
window.fetch = async (...args) => {
  const res = await fetching(...args);
  if (String(args[0]).endsWith("/messages")) window.__posted.push(res.headers.get("content-type"));
  return res;
};
}"""


def test_the_chat_page_gets_each_event_of_a_turn_once_from_the_stream(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": FONT, "chunk": 3, "pause_ms": 60}])  # slower than the 50 ms batching
    page = ui.page
    page.add_init_script(f"({RECORD_STREAM})()")
    ui.open("/")
    start_session(page, "demo")
    send(page, "I like JetBrains Mono")
    expect(card(page, "editor.font").locator(".status")).to_have_text("pending")
    expect(page.locator(".msg.assistant .text")).to_have_text("Sure.  Noted for next time.")
    with httpx.Client(base_url=ui.server.base_url, timeout=30) as client:
        auth = {"Authorization": f"Bearer {ui.server.token}"}
        session = client.get("/api/sessions/demo", headers=auth).json()
        log = client.get("/api/events", params={"session": "demo"}, headers=auth).json()
    turn = [(e["seq"], e["type"]) for e in log if e["seq"] > session["started_seq"]]
    received = [tuple(x) for x in page.evaluate("() => window.__received")]
    # Each event of the turn reached the page once, in seq order, from the one stream ...
    assert [x for x in received if x[0] > session["started_seq"]] == turn
    # ... and the send answered with the outcome only, no second copy of the events.
    assert page.evaluate("() => window.__posted") == ["application/json"]
    expect(page.locator(".msg")).to_have_count(2)
    expect(page.locator(".card")).to_have_count(1)


def test_edit_then_undo_in_the_memory_browser(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": FONT}])
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "font?")
    card(page, "editor.font").locator("button.approve").click()
    expect(card(page, "editor.font").locator(".status")).to_contain_text("accepted")

    ui.open("/memory")
    row = memory_row(page, "editor.font")
    expect(row.locator("button.undo")).to_have_count(0)  # nothing to undo yet
    row.locator("button.edit").click()
    row.locator("textarea.edit-body").fill("Fira Code, size 14")
    row.locator("button.save").click()
    expect(memory_row(page, "editor.font").locator(".body")).to_have_text("Fira Code, size 14")
    expect(memory_row(page, "editor.font").locator(".version")).to_have_text("v2")

    memory_row(page, "editor.font").locator("button.history-toggle").click()
    history = memory_row(page, "editor.font").locator(".history li")
    expect(history).to_have_count(3)
    expect(history.nth(2)).to_contain_text("Fira Code, size 14")

    memory_row(page, "editor.font").locator("button.undo").click()
    expect(memory_row(page, "editor.font").locator(".body")).to_have_text("JetBrains Mono")
    expect(memory_row(page, "editor.font").locator("button.undo")).to_have_count(0)

    # Filters, search and the session toggle.
    page.fill("#f-text", "nothing like this")
    expect(page.locator("#memory-count")).to_have_text("0 memories")
    page.fill("#f-text", "jetbrains")
    expect(page.locator("#memory-count")).to_have_text("1 memory")
    page.select_option("#f-status", "rejected")
    expect(page.locator("#memory-count")).to_have_text("0 memories")


def test_cards_show_the_replaced_value_and_the_untrusted_input_warning(
    make_ui: MakeUi, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("Always use tabs.", encoding="utf-8")
    ui = make_ui(
        [
            {"text": FONT},
            {"tool_call": {"name": "read_file", "arguments": {"path": "notes.txt"}}},
            {"text": 'Read it. <memory scope="user" key="editor.font">Tabs Mono</memory>'},
        ]
    )
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "font")
    first = card(page, "editor.font").first
    expect(first.locator(".replaces")).to_have_count(0)
    expect(first.locator(".warning")).to_have_count(0)
    first.locator("button.approve").click()
    expect(first.locator(".status")).to_contain_text("accepted")

    send(page, "read my notes")
    expect(page.locator(".line.tool")).to_have_text("tool read_file: ok")
    second = card(page, "editor.font").nth(1)
    expect(second.locator(".replaces .old")).to_have_text("JetBrains Mono")
    # The notes were read by the tool (and, freshly indexed, may be retrieved as a chunk too).
    expect(second.locator(".warning")).to_contain_text("Proposed after untrusted input (")
    expect(second.locator(".warning")).to_contain_text("tool_result: seq:")
    second.locator("button.approve").click()
    expect(second.locator(".status")).to_contain_text("accepted")

    ui.open("/memory")
    row = memory_row(page, "editor.font")
    expect(row.locator(".body")).to_have_text("Tabs Mono")
    expect(row.locator(".warning")).to_contain_text("untrusted input")


def test_reject_a_card_and_edit_then_approve_another(make_ui: MakeUi) -> None:
    ui = make_ui(
        [
            {"text": 'One. <memory scope="workspace" key="build.cmd">make build</memory>'},
            {"text": 'Two. <memory scope="user" key="tone">short answers</memory>'},
        ]
    )
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "how do I build?")
    build = card(page, "build.cmd")
    expect(build.locator(".badge")).to_have_text("workspace")
    build.locator("button.reject").click()
    expect(build.locator(".status")).to_contain_text("rejected · by user")

    send(page, "be brief")
    tone = card(page, "tone")
    tone.locator("button.edit").click()
    tone.locator("textarea.edit-body").fill("very short answers")
    tone.locator("button.approve-edited").click()
    expect(tone.locator(".status")).to_have_text("accepted · by user")
    expect(tone.locator(".body")).to_have_text("very short answers")

    headers = {"Authorization": f"Bearer {ui.server.token}"}
    with httpx.Client(base_url=ui.server.base_url, headers=headers) as api:
        records = {m["key"]: m for m in api.get("/api/memories").json()}
    assert records["build.cmd"]["status"] == "rejected"
    assert records["tone"]["body"] == "very short answers"


def test_xss_bodies_stay_inert_text(make_ui: MakeUi) -> None:
    ui = make_ui([{"text": f'{XSS} <memory scope="user" key="xss.key">{XSS}</memory>'}])
    page = ui.page
    ui.open("/")
    start_session(page, "<img src=x onerror=alert(3)>")
    send(page, XSS)
    proposal = card(page, "xss.key")
    expect(proposal.locator(".body")).to_have_text(XSS)
    expect(page.locator(".msg.user .text")).to_have_text(XSS)
    expect(page.locator(".msg.assistant .text")).to_contain_text("<img src=x onerror=alert(1)>")
    proposal.locator("button.approve").click()
    expect(proposal.locator(".status")).to_contain_text("accepted")
    assert page.locator("#transcript img, #transcript script").count() == 0
    assert page.locator("#sessions img").count() == 0

    ui.open("/memory")
    expect(memory_row(page, "xss.key").locator(".body")).to_have_text(XSS)
    memory_row(page, "xss.key").locator("button.history-toggle").click()
    expect(memory_row(page, "xss.key").locator(".history li").first).to_contain_text(XSS)
    assert page.locator("#memories img, #memories script").count() == 0
    assert ui.dialogs == []


def test_cli_changes_in_another_process_appear_without_a_reload(
    make_ui: MakeUi,
) -> None:
    ui = make_ui(
        [
            {"text": FONT},
            {"text": 'Ok. <memory scope="user" key="editor.theme">dark</memory>'},
        ]
    )
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "font")
    font_card = card(page, "editor.font")
    expect(font_card.locator(".status")).to_have_text("pending")
    font_id = font_card.get_attribute("data-memory-id")
    assert font_id
    page.evaluate("() => { window.__sameDocument = true; }")

    # A decision taken by the CLI updates the card live.
    ui.kairox("memory", "approve", font_id)
    expect(font_card.locator(".status")).to_have_text("accepted · by user")
    send(page, "theme")
    theme_card = card(page, "editor.theme")
    theme_id = theme_card.get_attribute("data-memory-id")
    assert theme_id
    ui.kairox("memory", "reject", theme_id, "--reason", "not now")
    expect(theme_card.locator(".status")).to_have_text("rejected · by user: not now")
    assert page.evaluate("() => window.__sameDocument") is True

    # An edit by the CLI shows in the open memory browser.
    ui.open("/memory")
    page.evaluate("() => { window.__sameDocument = true; }")
    row = memory_row(page, "editor.font")
    expect(row.locator(".body")).to_have_text("JetBrains Mono")
    ui.kairox("memory", "edit", font_id, "--body", "Iosevka from the CLI")
    expect(memory_row(page, "editor.font").locator(".body")).to_have_text("Iosevka from the CLI")
    assert page.evaluate("() => window.__sameDocument") is True


def test_context_chart_items_and_compaction_summary(make_ui: MakeUi) -> None:
    filler = " ".join(["The history here is long enough to be worth a summary."] * 6)
    ui = make_ui(
        [
            {"text": f"{FONT} {filler}"},
            {"text": f"Second answer. {filler}"},
            {"text": "User likes JetBrains Mono.", "purpose": "summary"},
        ]
    )
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "first question")
    card(page, "editor.font").locator("button.approve").click()
    expect(card(page, "editor.font").locator(".status")).to_contain_text("accepted")
    send(page, "second question")
    expect(page.locator(".msg.assistant .text").nth(1)).to_contain_text("Second answer.")
    page.click("#menu summary")
    page.click("#compact")
    expect(page.locator("#compact-status")).to_contain_text("compacted: events")
    expect(page.locator(".line", has_text="history compacted")).to_be_visible()

    ui.open("/context?session=demo")
    expect(page.locator("#c-turn option")).to_have_count(2)
    chart = page.locator("#budget-chart")
    expect(chart).to_be_visible()
    expect(chart.locator("rect.bar")).to_have_count(8)  # one per source, recall included
    for source in ("system", "memory", "history", "prompt"):
        width = chart.locator(f'rect.bar[data-source="{source}"]').get_attribute("width")
        assert width is not None and float(width) > 0, source
    expect(page.locator("#items tbody tr", has_text="editor.font")).to_have_count(1)
    expect(page.locator("#trace-head")).to_contain_text("budget")
    # The history search box: hits come back as text, each naming its session and seq.
    page.fill("#recall-q", "<b>second</b> question")
    page.click("#recall-form button")
    expect(page.locator("#recall-hits li.recall-hit").first).to_contain_text("second question")
    expect(page.locator("#recall-hits li.recall-hit").first).to_contain_text("demo")
    expect(page.locator("#recall-hits li.recall-hit").first).to_contain_text("seq:")
    summary = page.locator(".summary")
    expect(summary).to_have_count(1)
    expect(summary.locator("header")).to_contain_text("replaced events")
    expect(summary.locator(".body")).to_have_text("User likes JetBrains Mono.")
    expect(summary.locator(".badge")).to_have_count(0)  # a real summary, not the fallback

    page.select_option("#c-turn", "1")
    expect(page.locator("#trace-head .fact").first).to_contain_text("1")
    history_width = chart.locator('rect.bar[data-source="history"]')
    expect(page.locator('#budget-chart rect.bar[data-source="history"]')).to_have_attribute(
        "width", "0"
    )
    assert history_width.count() == 1


def test_compact_is_queued_behind_a_running_turn_and_errors_are_notices(make_ui: MakeUi) -> None:
    ui = make_ui(
        [{"deltas": ["Thinking"], "hang": True}],
        config='[profiles.big]\nmodel = "local"\ncontext_window = 16384\n',
    )
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "a long job")
    expect(page.locator(".msg.assistant .text")).to_have_text("Thinking")
    page.click("#menu summary")
    page.click("#compact")
    expect(page.locator("#compact-status")).to_have_text("queued (runs after the current turn)")
    page.click("#stop")
    expect(page.locator("#notice-text")).to_contain_text("the turn failed")
    # The queued compaction runs once the turn is over; its outcome arrives as events.
    expect(page.locator("#compact-status")).not_to_have_text("queued (runs after the current turn)")
    expect(page.locator("#send")).to_be_enabled()

    page.select_option("#profile", "big")
    page.click("#switch-profile")
    expect(page.locator(".session.current small")).to_have_text(" big")
    expect(page.locator(".line", has_text="profile switched: local → big")).to_be_visible()

    # A session name another workspace uses: this server starts its own session of that name
    # (another workspace's session is never shown, and its path is never named).
    other = ui.home.parent / "elsewhere"
    other.mkdir()
    ui.kairox(
        "send",
        "--workspace",
        str(other),
        "--session",
        "theirs",
        "--model",
        f"scripted:{_one_reply(other)}",
        "hello",
    )
    start_session(page, "theirs")
    expect(page.locator("#notice-text")).not_to_contain_text(str(other))
    expect(page.locator(".msg")).to_have_count(0)  # not the other workspace's conversation
    assert workspace_id_for(other) != workspace_id_for(ui.server.options.workspace)


def _one_reply(folder: Path) -> str:
    path = folder / "reply.jsonl"
    path.write_text(json.dumps({"text": "hi"}) + "\n", encoding="utf-8")
    return str(path)


def test_export_and_import_from_the_memory_browser(make_ui: MakeUi, tmp_path: Path) -> None:
    ui = make_ui([{"text": FONT}])
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "font")
    card(page, "editor.font").locator("button.approve").click()
    expect(card(page, "editor.font").locator(".status")).to_contain_text("accepted")

    ui.open("/memory")
    with page.expect_download() as download:
        page.click("#export-markdown")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "kairox-memories.md"
    text = saved.read_text(encoding="utf-8")
    assert "## user: editor.font" in text and "JetBrains Mono" in text

    with page.expect_download() as download:
        page.click("#export-json")
    assert (
        json.loads(Path(download.value.path()).read_text())["memories"][0]["key"] == "editor.font"
    )

    page.set_input_files(
        "#import-file",
        files=FilePayload(
            name="more.md",
            mimeType="text/markdown",
            buffer=b"## workspace: test.cmd\nmake test\n\n## user: editor.font\nIosevka\n",
        ),
    )
    expect(page.locator("#import-format")).to_have_value("markdown")
    page.click("#import")
    expect(page.locator("#notice-text")).to_contain_text("1 created, 1 replaced")
    expect(memory_row(page, "test.cmd").locator(".body")).to_have_text("make test")
    expect(memory_row(page, "editor.font").locator(".body")).to_have_text("Iosevka")

    page.set_input_files(
        "#import-file", files=FilePayload(name="bad.json", mimeType="application/json", buffer=b"{")
    )
    page.click("#import")
    expect(page.locator("#notice-text")).to_contain_text("not valid JSON")


def test_a_proposed_deletion_is_shown_as_one_and_approving_it_deletes(make_ui: MakeUi) -> None:
    """An MCP client's ``memory_delete`` of a user memory: a proposal the user decides here."""
    ui = make_ui([{"text": FONT}])
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "font?")
    card(page, "editor.font").locator("button.approve").click()
    expect(card(page, "editor.font").locator(".status")).to_contain_text("accepted")
    memory_id = card(page, "editor.font").get_attribute("data-memory-id")
    assert memory_id

    async def ask_to_forget() -> None:
        with AppFacade.open(ui.home) as facade:
            await facade.memory.forget(memory_id, workspace=ui.home)

    with ThreadPoolExecutor(1) as pool:  # the sync Playwright API holds this thread's loop
        pool.submit(asyncio.run, ask_to_forget()).result()
    ui.open("/memory")
    page.select_option("#f-status", "pending")
    row = page.locator(
        ".memory-row.status-pending", has=page.locator(".key", has_text="editor.font")
    )
    expect(row.locator(".forget")).to_contain_text("approving deletes this memory")
    expect(row.locator("button.edit")).to_have_count(0)
    row.locator("button.approve").click()
    page.select_option("#f-status", "deleted")
    deleted = memory_row(page, "editor.font")
    expect(deleted.locator(".status")).to_have_text("deleted")
    expect(deleted.locator(".body")).to_have_text("JetBrains Mono")


def test_a_session_memory_accepted_with_its_taint_has_one_forget_button(
    make_ui: MakeUi, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("The build runs on port 8080.", encoding="utf-8")
    ui = make_ui(
        [
            {"tool_call": {"name": "read_file", "arguments": {"path": "notes.txt"}}},
            {"text": 'Read it. <memory scope="session">the build runs on port 8080</memory>'},
        ]
    )
    page = ui.page
    ui.open("/")
    start_session(page, "demo")
    send(page, "read my notes")
    tainted = card(page, "(no key)")
    expect(tainted.locator(".status")).to_contain_text("accepted · by policy")
    expect(tainted.locator(".warning")).to_contain_text("tool_result: seq:")
    expect(tainted.locator("button.approve")).to_be_hidden()
    tainted.locator("button.forget").click()
    expect(tainted.locator(".status")).to_contain_text("deleted")
    expect(tainted.locator("button.forget")).to_be_hidden()
