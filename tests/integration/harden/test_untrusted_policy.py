"""An untrusted repository may only tighten the user's memory and tool policy (issue 33,
Medium): ``session_after_untrusted``, ``max_proposals_per_turn``, ``extract`` (also a profile's),
``auto_accept_session`` and ``read_file_max_bytes``."""

from __future__ import annotations

from pathlib import Path

from harden_fakes import Kx

from kairox.app.facade import describe_model
from kairox.core.config_load import LoadedConfig, load_config

USER = (
    '[memory]\nsession_after_untrusted = "ask"\nmax_proposals_per_turn = 2\nextract = "off"\n'
    "auto_accept_session = false\n[tools]\nread_file_max_bytes = 1000\n"
)
LOOSER = (
    '[memory]\nsession_after_untrusted = "accept"\nmax_proposals_per_turn = 50\n'
    'extract = "after_turn"\nauto_accept_session = true\n'
    "[tools]\nread_file_max_bytes = 16777216\n"
    '[profiles.local]\nextract = "after_turn"\n'
)
LOOSENED = [
    "memory.session_after_untrusted",
    "memory.max_proposals_per_turn",
    "memory.extract",
    "memory.auto_accept_session",
    "tools.read_file_max_bytes",
    "profiles.local.extract",
]


def _setup(tmp_path: Path, workspace: Path, user: str, repo: str) -> Path:
    file = tmp_path / "user.toml"
    file.write_text(user)
    (workspace / ".kairox").mkdir(exist_ok=True)
    (workspace / ".kairox" / "config.toml").write_text(repo)
    return file


def _load(workspace: Path, user: Path, home: Path) -> LoadedConfig:
    return load_config(workspace, user_file=user, home=home, describe=describe_model)


def test_a_repo_cannot_loosen_the_users_policy(
    tmp_path: Path, workspace: Path, kairox_home: Path, kx: Kx
) -> None:
    user = _setup(tmp_path, workspace, USER, LOOSER)
    loaded = _load(workspace, user, kairox_home)
    memory, tools = loaded.config.memory, loaded.config.tools
    assert memory.session_after_untrusted == "ask"
    assert memory.max_proposals_per_turn == 2
    assert memory.extract == "off"
    assert memory.auto_accept_session is False
    assert tools.read_file_max_bytes == 1000
    assert loaded.config.profiles["local"].extract is None
    assert sorted(loaded.ignored) == sorted(LOOSENED)
    assert loaded.source_of("memory.extract") == str(user)

    shown = kx("config", "show", "--workspace", str(workspace), env={"KAIROX_CONFIG": str(user)})
    assert shown.returncode == 0, shown.stderr
    for key in LOOSENED:
        assert key in shown.stdout + shown.stderr


def test_the_defaults_are_the_users_policy_when_their_file_is_silent(
    tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    user = _setup(tmp_path, workspace, "", LOOSER)
    loaded = _load(workspace, user, kairox_home)
    # accept, inline and true are the defaults: only the larger numbers and after_turn are looser
    assert sorted(loaded.ignored) == sorted(
        [
            "memory.max_proposals_per_turn",
            "memory.extract",
            "tools.read_file_max_bytes",
            "profiles.local.extract",
        ]
    )
    assert loaded.config.memory.max_proposals_per_turn == 5


def test_a_repo_may_tighten_the_users_policy(
    tmp_path: Path, workspace: Path, kairox_home: Path
) -> None:
    user = _setup(
        tmp_path,
        workspace,
        "",
        '[memory]\nsession_after_untrusted = "ask"\nmax_proposals_per_turn = 1\n'
        'extract = "off"\nauto_accept_session = false\n[tools]\nread_file_max_bytes = 500\n',
    )
    loaded = _load(workspace, user, kairox_home)
    memory = loaded.config.memory
    assert (memory.session_after_untrusted, memory.max_proposals_per_turn) == ("ask", 1)
    assert (memory.extract, memory.auto_accept_session) == ("off", False)
    assert loaded.config.tools.read_file_max_bytes == 500
    assert loaded.ignored == ()
