"""Hindi, Tamil, Arabic and Thai through the real binary, on both stores: ``kairox search``,
``memory search`` and ``recall`` find a text by a word in its language. Before, a combining
mark (the vowel signs of ``बिल्ली``) cut a word into letters, so ``बिल्ली`` (cat) and ``बल्ला``
(bat) were the same terms, and a Thai sentence was a few long fragments, so no Thai word in it
could be found."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import accept_workspace_memory, kx, write_config

CAT = "मेरी बिल्ली रोज़ सर्वर के ऊपर सोती है"  # my cat sleeps on the server every day
BAT = "क्रिकेट का बल्ला लकड़ी का बना है"  # the cricket bat is made of wood
THAI_FOOD = "ฉันชอบอาหารไทยมาก โดยเฉพาะต้มยำกุ้ง"  # I like Thai food, tom yum most
THAI_SEA = "เราจะไปเที่ยวทะเลในวันหยุดสุดสัปดาห์นี้"  # we go to the sea this weekend


def test_search_finds_files_by_a_word_with_marks_or_inside_an_unspaced_sentence(
    workspace: Path, on_store: str | None
) -> None:
    files = {
        "cat.md": CAT,
        "bat.md": BAT,
        "food.md": THAI_FOOD,
        "sea.md": THAI_SEA,
        "tamil.md": "தரவுத்தளம் ஒவ்வொரு இரவும் காப்புப் பிரதி எடுக்கப்படுகிறது",
        "arabic.md": "تُحْفَظُ قَاعِدَةُ الْبَيَانَاتِ كُلَّ لَيْلَةٍ",  # with harakat
        "english.md": "The cafeteria serves lunch at noon.",
    }
    for name, text in files.items():
        (workspace / name).write_text(text + "\n", encoding="utf-8")

    def paths(query: str) -> list[str]:
        done = kx("search", query, "--workspace", str(workspace), "--json")
        assert done.returncode == 0, done.stderr
        return [str(h["path"]) for h in json.loads(done.stdout)]

    assert paths("बिल्ली")[:1] == ["cat.md"] and "bat.md" not in paths("बिल्ली")
    assert paths("बल्ला")[:1] == ["bat.md"] and "cat.md" not in paths("बल्ला")
    assert paths("อาหาร")[:1] == ["food.md"]  # a word inside a Thai sentence
    assert paths("ทะเล")[:1] == ["sea.md"]
    assert paths("தரவுத்தளம்")[:1] == ["tamil.md"]
    assert paths("قاعدة البيانات")[:1] == ["arabic.md"]  # found without the harakat


def test_memory_search_and_recall_in_hindi_and_thai(
    kairox_home: Path, workspace: Path, on_store: str | None
) -> None:
    cat = accept_workspace_memory(kairox_home, workspace, "pet", CAT)
    bat = accept_workspace_memory(kairox_home, workspace, "sport", BAT)
    food = accept_workspace_memory(kairox_home, workspace, "food", THAI_FOOD)
    ws = str(workspace)

    def ids(query: str) -> list[str]:
        done = kx("memory", "search", query, "--workspace", ws, "--json")
        assert done.returncode == 0, done.stderr
        return [h["record"]["id"] for h in json.loads(done.stdout)]

    assert ids("बिल्ली")[:1] == [cat] and bat not in ids("बिल्ली")
    assert ids("बल्ला")[:1] == [bat]
    assert ids("ต้มยำ")[:1] == [food]

    script = workspace.parent / "script.jsonl"
    script.write_text(json.dumps({"text": "ครับ"}) + "\n" + json.dumps({"text": "ok"}) + "\n")
    write_config(
        workspace,
        f'[profiles.local]\nmodel = "scripted:{script}"\n[retrieval]\nworkspace_index = false\n',
    )
    for text in (THAI_SEA, "The build is green."):
        sent = kx("send", "--workspace", ws, "--session", "chat", text)
        assert sent.returncode == 0, sent.stderr
    recalled = kx("recall", "เที่ยวทะเล", "--json", cwd=workspace)
    assert recalled.returncode == 0, recalled.stderr
    assert json.loads(recalled.stdout)["hits"][0]["snippet"] == THAI_SEA
