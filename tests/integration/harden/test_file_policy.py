"""One file policy for every reader of the workspace: the index (and so retrieval, ``kairox
search`` and the prompt of a turn), ``read_file``, ``kairox kb add`` and MCP ``workspace_search``.

Never outside the workspace's real path, never the secret denylist (case-insensitive), never
un-ignored by an untrusted ``.kairoxignore``; chunks indexed before the policy refused a file are
gone at the next refresh.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from harden_fakes import Kx, LoggingServer
from mcp import Client

from kairox.app import AppFacade
from kairox.mcp.server import build_server
from kairox.runtime.tools import BuiltinTools

SECRET = "AKIAQUOKKASECRETVALUE"


def _index(kx: Kx, workspace: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    out = kx("index", str(workspace), "--json", env=env)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert isinstance(report, dict)
    return report


def _search(kx: Kx, workspace: Path, query: str, env: dict[str, str] | None = None) -> str:
    out = kx("search", "--workspace", str(workspace), "--json", query, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_symlink_out_of_the_workspace_reaches_neither_search_nor_the_prompt(
    tmp_path: Path, workspace: Path, logging_openai: Callable[[], LoggingServer], kx: Kx
) -> None:
    outside = tmp_path / "home" / ".aws"
    outside.mkdir(parents=True)
    (outside / "credentials").write_text(f"aws_secret_access_key = {SECRET} quokka\n")
    (workspace / "notes.md").symlink_to(outside / "credentials")
    (workspace / "readme.md").write_text("The quokka project keeps its notes here.\n")
    server = logging_openai()
    user_config = tmp_path / "user.toml"
    user_config.write_text(
        'default_profile = "remote"\n[profiles.remote]\nmodel = "openai:fake"\n'
        f'base_url = "{server.openai_url}"\napi_key_env = "MY_KEY"\n'
    )
    env = {"KAIROX_CONFIG": str(user_config), "MY_KEY": "k"}

    report = _index(kx, workspace, env)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}  # type: ignore[union-attr]
    assert skipped == {"notes.md": "outside-workspace"}
    assert SECRET not in _search(kx, workspace, f"aws_secret_access_key {SECRET} quokka", env)

    question = "what is my aws_secret_access_key for quokka?"
    sent = kx("send", "--workspace", str(workspace), question, env=env)
    assert sent.returncode == 0, sent.stderr
    [request] = [r for r in server.requests if str(r["path"]).endswith("/chat/completions")]
    assert question in json.dumps(request["body"])
    assert SECRET not in json.dumps(request["body"])

    tools = BuiltinTools(workspace, None)
    refused = tools.read_file("notes.md")
    assert refused.is_error and "outside the workspace" in refused.text


def test_the_denylist_is_case_insensitive_for_the_index_and_read_file(
    workspace: Path, kx: Kx
) -> None:
    names = ("Secrets.txt", "CREDENTIALS", "deploy.PEM", ".ENV", "conf/.Env.local")
    (workspace / "conf").mkdir()
    for name in names:
        (workspace / name).write_text(f"token {SECRET} quokka\n")
    (workspace / "ok.md").write_text("quokka facts\n")
    (workspace / "alias.md").symlink_to(workspace / "Secrets.txt")  # a link to a denied file

    report = _index(kx, workspace)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}  # type: ignore[union-attr]
    for name in (*names, "alias.md"):
        assert skipped.get(name) == "secret", (name, skipped)
    assert report["indexed"] == 1
    assert SECRET not in _search(kx, workspace, f"token {SECRET} quokka")

    tools = BuiltinTools(workspace, None)
    for name in (*names, "alias.md"):
        result = tools.read_file(name)
        assert result.is_error and "may hold secrets" in result.text, (name, result.text)


def test_an_untrusted_kairoxignore_cannot_unignore_what_gitignore_hides(
    workspace: Path, kx: Kx
) -> None:
    (workspace / ".gitignore").write_text("private.md\n.env\n")
    (workspace / ".kairoxignore").write_text("!private.md\n!.env\n")
    (workspace / "private.md").write_text(f"private quokka {SECRET}\n")
    (workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (workspace / "public.md").write_text("public quokka\n")

    _index(kx, workspace)
    assert SECRET not in _search(kx, workspace, f"private quokka {SECRET}")
    tools = BuiltinTools(workspace, None)
    for name in ("private.md", ".env"):
        assert tools.read_file(name).is_error, name

    # Trusted, the workspace's .kairoxignore may un-ignore a file, never a denied one.
    config = workspace / ".kairox" / "config.toml"
    config.parent.mkdir()
    config.write_text("[retrieval]\nk = 5\n")
    assert kx("trust", str(workspace)).returncode == 0
    report = _index(kx, workspace)
    assert report["indexed"] == 1  # private.md joins; public.md is unchanged
    found = _search(kx, workspace, "private quokka")
    assert "private.md" in found
    assert "TOKEN=" not in _search(kx, workspace, f"TOKEN {SECRET}")


async def test_chunks_indexed_before_the_policy_refused_them_are_dropped(
    tmp_path: Path,
    workspace: Path,
    kx: Kx,
    kairox_home: Path,
    on_store: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workspace / "tokens.md").write_text(f"deploy token {SECRET} quokka\n")
    (workspace / "ok.md").write_text("quokka deploy token facts\n")
    assert _index(kx, workspace)["indexed"] == 2
    assert SECRET in _search(kx, workspace, f"deploy token {SECRET}")

    user_config = tmp_path / "user.toml"
    user_config.write_text('[tools]\nread_file_deny = ["tokens.md"]\n')
    monkeypatch.setenv("KAIROX_CONFIG", str(user_config))
    # Before any refresh: neither `kairox search` nor MCP workspace_search returns it.
    assert SECRET not in _search(kx, workspace, f"deploy token {SECRET}")
    facade = AppFacade.open(kairox_home)
    try:
        async with Client(build_server(facade, workspace=workspace)) as client:
            result = await client.call_tool("workspace_search", {"query": f"quokka token {SECRET}"})
            found = json.dumps(result.structured_content)
    finally:
        await facade.aclose()
        facade.close()
    assert "ok.md" in found and SECRET not in found

    report = _index(kx, workspace)  # the refresh (a search refreshes first) dropped them
    assert report["chunks"] == 1
    assert SECRET not in _search(kx, workspace, f"deploy token {SECRET}")


def test_kb_add_applies_the_policy(tmp_path: Path, workspace: Path, kx: Kx) -> None:
    docs = workspace / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nquokka handbook\n")
    (docs / "Secrets.txt").write_text(f"kb {SECRET}\n")
    outside = tmp_path / "elsewhere.md"
    outside.write_text(f"outside {SECRET}\n")
    (docs / "linked.md").symlink_to(outside)
    (workspace / "id_rsa").write_text(f"-----BEGIN {SECRET}\n")
    config = workspace / ".kairox" / "config.toml"
    config.parent.mkdir()
    config.write_text('[knowledge_bases.hb]\nkind = "sqlite_fts"\npath = "hb.db"\n')

    added = kx("kb", "add", "hb", str(docs), str(workspace / "id_rsa"), "--workspace",
               str(workspace))  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "1 documents" in added.stdout
    for name in ("Secrets.txt", "linked.md", "id_rsa"):
        assert name in added.stdout + added.stderr, name
    found = kx("kb", "search", "hb", SECRET, "--workspace", str(workspace))
    assert SECRET not in found.stdout
