"""Where Kairox keeps its data: ``--home``, else ``$KAIROX_HOME``, else the platform data dir."""

from __future__ import annotations

import os
from pathlib import Path

DB_FILENAME = "kairox.db"


def resolve_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get("KAIROX_HOME")
    if env:
        return Path(env).expanduser().resolve()
    from platformdirs import user_data_dir

    return Path(user_data_dir("kairox", appauthor=False))


def database_path(home: Path) -> Path:
    return home / DB_FILENAME
