"""Binding rules of the server: loopback by default, other addresses only when allowed."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from kairox.core.errors import InvalidInput
from kairox.web.server import ServerOptions, bind, host_names, is_loopback, prepare


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_remote_address_needs_allow_remote() -> None:
    with pytest.raises(InvalidInput, match="--allow-remote"):
        bind("0.0.0.0", 0)


def test_a_busy_port_is_a_clear_error() -> None:
    taken = bind("127.0.0.1", 0)
    try:
        with pytest.raises(InvalidInput, match="try --port 0"):
            bind("127.0.0.1", taken.getsockname()[1])
    finally:
        taken.close()


def test_loopback_url_and_hosts(workspace: Path) -> None:
    prepared = prepare(ServerOptions(workspace=workspace, port=0))
    try:
        assert prepared.url == f"http://127.0.0.1:{prepared.port}/?token={prepared.security.token}"
        assert prepared.security.extra_hosts == ()
        assert f"localhost:{prepared.port}" in prepared.security.allowed_hosts
    finally:
        prepared.sock.close()


def test_a_wildcard_host_allows_this_machines_names(workspace: Path) -> None:
    prepared = prepare(
        ServerOptions(workspace=workspace, host="0.0.0.0", port=0, allow_remote=True)
    )
    try:
        allowed = prepared.security.allowed_hosts
        assert f"{socket.gethostname().lower()}:{prepared.port}" in allowed
        assert f"0.0.0.0:{prepared.port}" not in allowed
        assert prepared.url.startswith(f"http://0.0.0.0:{prepared.port}/?token=")
    finally:
        prepared.sock.close()


def test_a_named_host_is_allowed_as_given() -> None:
    assert host_names("192.168.1.5") == ("192.168.1.5",)
    assert host_names("fe80::1") == ("[fe80::1]",)
