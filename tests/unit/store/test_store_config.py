"""``[store] url`` / ``$KAIROX_STORE_URL`` select the backend; no url keeps SQLite in the home."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairox.core.config_load import load_config
from kairox.core.errors import ConfigError, StoreError
from kairox.services import Services


def test_env_and_file_set_the_store_url(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('[store]\nurl = "postgresql://kx:pw@db.example/kairox"\n')
    loaded = load_config(user_file=user, env={})
    assert loaded.config.store.url == "postgresql://kx:pw@db.example/kairox"
    override = load_config(user_file=user, env={"KAIROX_STORE_URL": "postgresql://o@h/x"})
    assert override.config.store.url == "postgresql://o@h/x"
    shown = loaded.config.model_dump(mode="json")["store"]["url"]
    assert shown == "postgresql://kx:***@db.example/kairox"  # config show hides the password
    assert load_config(user_file=tmp_path / "none.toml", env={}).config.store.url is None


def test_a_non_postgres_url_is_a_config_error(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('[store]\nurl = "mysql://x@h/db"\n')
    with pytest.raises(ConfigError) as info:
        load_config(user_file=user, env={})
    assert "store.url" in str(info.value)


def test_services_follow_the_url(kairox_home: Path, pg_url: str) -> None:
    sqlite = Services.open(kairox_home)
    assert sqlite.store.kind == "sqlite" and (kairox_home / "kairox.db").is_file()
    sqlite.close()
    pg = Services.open(kairox_home, store_url=pg_url)
    assert pg.store.kind == "postgres" and "postgresql://" in pg.store.location
    pg.close()


def test_an_unreachable_postgres_is_one_clear_line(kairox_home: Path) -> None:
    with pytest.raises(StoreError) as info:
        Services.open(kairox_home, store_url="postgresql://kx:secret@/nope?host=/nonexistent")
    message = str(info.value)
    assert "\n" not in message and "secret" not in message
    assert "cannot use the Postgres store" in message and "[store] url" in message
