"""Binding a local server safely: loopback unless told otherwise, and the Host names it answers.

The web UI (``kairox serve``) and the shared MCP server (``kairox mcp --http``) both use these, so
they refuse a remote address and check Host headers the same way.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket

from kairox.core.errors import InvalidInput

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_names(host: str) -> tuple[str, ...]:
    """Names a browser may put in the Host header for ``host``; a wildcard means this machine's."""
    bare = host.strip("[]")
    if bare not in ("0.0.0.0", "::"):
        return (f"[{bare}]" if ":" in bare else bare,)
    names = {socket.gethostname(), socket.getfqdn()}
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None):
            address = str(info[4][0])
            names.add(f"[{address}]" if ":" in address else address)
    return tuple(sorted(n for n in names if n))


def bind(
    host: str, port: int, *, allow_remote: bool = False, what: str = "the web UI"
) -> socket.socket:
    """A listening socket; a non-loopback ``host`` needs ``allow_remote``."""
    if not is_loopback(host) and not allow_remote:
        raise InvalidInput(
            f"refusing to listen on {host}: {what} is for this machine only; "
            "pass --allow-remote to expose it (anyone with the token gets full access)"
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(
            f"cannot listen on {host}:{port} ({exc.strerror}); try --port 0"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_host(host: str) -> str:
    """``host`` as it goes in a URL (an IPv6 address in brackets)."""
    shown = host.strip("[]")
    return f"[{shown}]" if ":" in shown else shown
