"""Contract suite for ``SessionStore`` (sessions and leases), on SQLite and on Postgres.

Two ``Services`` on one store stand for two processes (on Postgres each holds its own
connections, so an advisory lock taken by one is foreign to the other); the crashed holder is a
real process killed with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from kairox.core.errors import InvalidInput, SessionBusy
from kairox.services import Services


@pytest.fixture
def pair(kairox_home: Path, store_url: str | None) -> tuple[Services, Services]:
    return (
        Services.open(kairox_home, store_url=store_url),
        Services.open(kairox_home, store_url=store_url),
    )


def test_sessions_are_one_per_name_and_workspace(
    pair: tuple[Services, Services], workspace: Path, tmp_path: Path
) -> None:
    one, two = pair
    first = one.sessions.start("main", workspace, "local")
    assert two.sessions.start("main", workspace, "local") == first
    assert two.sessions.get(first.id) == first and one.sessions.find("nope") is None
    switched = two.sessions.switch_profile("main", "big", first.workspace_id)
    assert one.sessions.get("main").profile == "big" == switched.profile
    assert [s.name for s in one.sessions.list(first.workspace_id)] == ["main"]


def test_each_workspace_has_its_own_session_of_a_name(
    pair: tuple[Services, Services], workspace: Path, tmp_path: Path
) -> None:
    one, two = pair
    other = tmp_path / "elsewhere"
    other.mkdir()
    here = one.sessions.start("main", workspace, "local")
    there = two.sessions.start("main", other, "big")
    assert there.id != here.id and there.name == "main" and there.profile == "big"
    assert one.sessions.get("main", here.workspace_id) == here
    assert one.sessions.get("main", there.workspace_id) == there
    assert two.sessions.get(there.id) == there  # ids are unique in the home
    assert one.sessions.find("main", "ws_0000000000000000") is None
    assert [s.id for s in one.sessions.named("main")] == [here.id, there.id]
    with pytest.raises(InvalidInput, match="2 workspaces"):
        one.sessions.get("main")  # a bare name must not pick one of them
    archived = two.sessions.archive("main", two.memories.discard_session, there.workspace_id)
    assert archived.id == there.id and archived.archived
    assert not one.sessions.get(here.id).archived
    assert one.sessions.unarchive(there.id).archived is False
    switched = one.sessions.switch_profile("main", "tiny", here.workspace_id)
    assert switched.id == here.id and two.sessions.get(there.id).profile == "big"
    assert [s.id for s in one.sessions.list(there.workspace_id)] == [there.id]


def test_leases_of_same_named_sessions_are_independent(
    pair: tuple[Services, Services], workspace: Path, tmp_path: Path
) -> None:
    one, two = pair
    other = tmp_path / "elsewhere"
    other.mkdir()
    here = one.sessions.start("main", workspace, "local")
    there = two.sessions.start("main", other, "local")
    one.sessions.acquire_lease(here.id, "proc-one")
    two.sessions.acquire_lease(there.id, "proc-two")  # another session, not busy
    with pytest.raises(SessionBusy):
        two.sessions.acquire_lease(here.id, "proc-two")  # each lease is its own session's
    with pytest.raises(SessionBusy):
        one.sessions.acquire_lease(there.id, "proc-one")
    one.sessions.release_lease(here.id, "proc-one")
    two.sessions.acquire_lease(here.id, "proc-two")  # released: free for another holder
    two.sessions.release_lease(here.id, "proc-two")
    two.sessions.release_lease(there.id, "proc-two")


def test_lease_refuses_another_holder_then_hands_over(
    pair: tuple[Services, Services], workspace: Path
) -> None:
    one, two = pair
    session = one.sessions.start("main", workspace, "local")
    one.sessions.acquire_lease(session.id, "proc-one")
    one.sessions.acquire_lease(session.id, "proc-one")  # re-entrant for its holder
    with pytest.raises(SessionBusy) as busy:
        two.sessions.acquire_lease(session.id, "proc-two")
    assert "session busy: 'main'" in str(busy.value) and "proc-one" in str(busy.value)
    timer = threading.Timer(0.3, one.sessions.release_lease, (session.id, "proc-one"))
    timer.start()
    two.sessions.acquire_lease(session.id, "proc-two", wait_s=30)  # waits, then gets it
    timer.join()
    with pytest.raises(SessionBusy):
        one.sessions.acquire_lease(session.id, "proc-one")
    two.sessions.release_lease(session.id, "proc-two")
    one.sessions.acquire_lease(session.id, "proc-one")


HOLDER = textwrap.dedent(
    """
    import sys, time
    from kairox.services import Services

    services = Services.open(sys.argv[1])
    services.sessions.acquire_lease(sys.argv[2], "doomed", ttl_s=1.0)
    print("held", flush=True)
    time.sleep(600)
    """
)


def test_a_killed_holder_does_not_block_the_session(
    pair: tuple[Services, Services],
    workspace: Path,
    kairox_home: Path,
    store_url: str | None,
    tmp_path: Path,
) -> None:
    one, _ = pair
    session = one.sessions.start("main", workspace, "local")
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    env = dict(os.environ)
    if store_url is not None:
        env["KAIROX_STORE_URL"] = store_url
    proc = subprocess.Popen(
        [sys.executable, str(script), str(kairox_home), session.id],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    with pytest.raises(SessionBusy):
        one.sessions.acquire_lease(session.id, "survivor")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    # Postgres frees the lock with the dead connection; SQLite once the 1 s lease expires.
    one.sessions.acquire_lease(session.id, "survivor", wait_s=30)


def test_archive_hides_a_session_and_discards_its_session_memories(
    pair: tuple[Services, Services], workspace: Path
) -> None:
    from kairox.core.types import MemoryScope

    one, two = pair
    session = one.sessions.start("main", workspace, "local")
    note = one.memories.propose(
        MemoryScope.SESSION, None, "Scratch note.", workspace_id=None, session_id=session.id
    )
    archived = two.sessions.archive("main", two.memories.discard_session)
    assert archived.archived and one.sessions.list() == []
    assert [s.name for s in one.sessions.list(include_archived=True)] == ["main"]
    assert one.memories.get(note.id).status.value == "deleted"
    assert two.sessions.archive("main", two.memories.discard_session).archived  # a no-op
    assert not one.sessions.unarchive("main").archived
    assert [s.name for s in two.sessions.list()] == ["main"]
