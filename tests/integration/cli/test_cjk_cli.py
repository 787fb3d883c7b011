"""Chinese, Japanese and Korean through the real binary: ``kairox memory search``, ``recall`` and
``search`` find text by a question in its language; ``CI`` is not a match for ``city``; a
vocabulary past the stemmer's cache limit does not break search (issue 33)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from helpers import accept_workspace_memory, kx
from kairox.core.ids import workspace_id_for
from kairox.core.types import Actor, MemoryScope
from kairox.services import Services

DB_MEMORY = "我们的项目使用 PostgreSQL 17 数据库"


def test_memory_search_finds_a_chinese_memory_by_a_chinese_question(
    kairox_home: Path, workspace: Path
) -> None:
    db = accept_workspace_memory(kairox_home, workspace, "项目.数据库", DB_MEMORY)
    accept_workspace_memory(kairox_home, workspace, "饮料", "用户喜欢喝绿茶，不喝咖啡")
    accept_workspace_memory(
        kairox_home, workspace, "style.commits", "Commit messages follow Conventional Commits"
    )
    ws = str(workspace)
    found = kx("memory", "search", "我们用什么数据库", "--workspace", ws, "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits and hits[0]["record"]["id"] == db
    # Typed as it is written, inside a mixed word: first, at 1.00.
    mixed = json.loads(kx("memory", "search", "数据库", "--workspace", ws, "--json").stdout)
    assert mixed[0]["record"]["id"] == db and mixed[0]["score"] == 1.0


def test_memory_search_matches_whole_words_not_any_substring(
    kairox_home: Path, workspace: Path
) -> None:
    accept_workspace_memory(
        kairox_home, workspace, "home.city", "The user lives in a big city by the sea"
    )
    ci = accept_workspace_memory(kairox_home, workspace, "ci.runner", "CI runs on GitHub Actions")
    hits = json.loads(kx("memory", "search", "CI", "--workspace", str(workspace), "--json").stdout)
    assert hits[0]["record"]["id"] == ci and hits[0]["score"] == 1.0
    assert all(h["score"] < 1.0 for h in hits[1:])


def _script(workspace: Path, *replies: str) -> None:
    path = workspace.parent / "script.jsonl"
    path.write_text("".join(json.dumps({"text": r}) + "\n" for r in replies), encoding="utf-8")
    config = workspace / ".kairox" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(
        f'[profiles.local]\nmodel = "scripted:{path}"\n[retrieval]\nworkspace_index = false\n'
    )


def test_recall_finds_a_fact_said_in_a_chinese_conversation(workspace: Path) -> None:
    _script(workspace, "好的，记住了。", "不客气。", "明白。")
    said = ("我的猫叫小橘，它喜欢睡在服务器上。", "谢谢你", "今天天气很好")
    for text in said:
        sent = kx("send", "--workspace", str(workspace), "--session", "chat", text)
        assert sent.returncode == 0, sent.stderr
    found = kx("recall", "我的猫叫什么名字", "--json", "--k", "3", cwd=workspace)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits and hits[0]["snippet"] == said[0]


def test_search_finds_chinese_japanese_korean_and_mixed_files(workspace: Path) -> None:
    files = {
        "deploy.md": "部署流程：先运行全部测试，再把镜像推送到生产服务器。\n",
        "database.md": "本项目使用PostgreSQL数据库，每天晚上自动备份。\n",
        "nihongo.md": "データベースのバックアップは毎晩三時に実行されます。\n",
        "hangul.md": "우리 팀은 매주 금요일에 배포 회의를 합니다.\n",
        "english.md": "The cafeteria serves lunch at noon.\n",
    }
    for name, text in files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    ws = str(workspace)

    def first(query: str) -> str:
        done = kx("search", query, "--workspace", ws, "--json")
        assert done.returncode == 0, done.stderr
        hits = json.loads(done.stdout)
        assert hits, f"no hit for {query}"
        return str(hits[0]["path"])

    assert first("数据库多久备份一次？") == "database.md"
    assert first("怎么部署到生产服务器") == "deploy.md"
    assert first("postgresql") == "database.md"
    assert first("バックアップは何時ですか") == "nihongo.md"
    assert first("배포 회의는 언제") == "hangul.md"


def test_search_and_memory_search_survive_a_vocabulary_past_the_stemmer_cache(
    kairox_home: Path, workspace: Path
) -> None:
    """70,000 distinct words: ``kairox search deploy`` printed a KeyError and no results, and
    memory search a traceback (the stemmer cleared its cache, then read from it)."""
    rng = random.Random(7)
    letters = "bcdfghjklmnpqrstvwxz"
    words = sorted({"".join(rng.choice(letters) for _ in range(9)) for _ in range(70_000)})
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    (workspace / "words.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (workspace / "deploy.md").write_text("Deploy with the blue-green pipeline.\n")
    done = kx("search", "deploy pipeline", "--workspace", str(workspace), "--json")
    assert done.returncode == 0 and "KeyError" not in done.stderr, done.stderr
    assert json.loads(done.stdout)[0]["path"] == "deploy.md"

    services = Services.open(kairox_home)
    try:
        for start in range(0, len(words), 7_000):  # ten memories, 7,000 distinct words each
            record = services.memories.propose(
                MemoryScope.WORKSPACE,
                f"bulk.{start}",
                " ".join(words[start : start + 7_000]),
                workspace_id=workspace_id_for(workspace),
                session_id=None,
            )
            services.memories.accept(record.id, actor=Actor.USER)
    finally:
        services.close()
    topic = accept_workspace_memory(
        kairox_home, workspace, "topic.deploy", "Deploys go through the pipeline"
    )
    found = kx("memory", "search", "deploy topic", "--workspace", str(workspace), "--json")
    assert found.returncode == 0 and "Traceback" not in found.stderr, found.stderr
    assert json.loads(found.stdout)[0]["record"]["id"] == topic
