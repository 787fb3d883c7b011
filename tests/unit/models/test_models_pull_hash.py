"""``pull`` never downloads a file it cannot verify: a catalog entry without a published SHA-256
needs ``--sha256``, and every known model that can be pulled carries its publisher's hash."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from kairox.core.errors import InvalidInput
from kairox.models import catalog
from kairox.models import pull as pull_module


def test_every_known_model_with_a_url_has_a_sha256() -> None:
    for model in catalog.KNOWN.values():
        if model.url is not None:
            assert model.sha256 is not None and re.fullmatch(r"[0-9a-f]{64}", model.sha256)
            assert model.size is not None and model.size > 0


def test_an_entry_without_a_known_hash_needs_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = dataclasses.replace(
        catalog.KNOWN["qwen2.5-0.5b-instruct"], name="nohash", sha256=None, size=None
    )
    monkeypatch.setitem(catalog.KNOWN, "nohash", entry)

    def no_download(*_args: object) -> None:
        raise AssertionError("nothing is downloaded without a hash to verify it by")

    monkeypatch.setattr(pull_module, "_download", no_download)
    with pytest.raises(InvalidInput, match=r"no official SHA-256 is known for nohash.*--sha256"):
        pull_module.pull("nohash", home=tmp_path)
    assert not (tmp_path / "models").exists()
    with pytest.raises(InvalidInput, match="64 hexadecimal"):
        pull_module.pull("nohash", sha256="abc", home=tmp_path)
