"""A model's marker whose key could forge a listing row is a rejected proposal, with the reason."""

from __future__ import annotations

import pytest

from kairox.memory.markers import parse_memory_markers


@pytest.mark.parametrize(
    ("key", "reason"),
    [("a\tb", "control character"), ("x\u202ey", "bidirectional"), ("k" * 201, "limit is 200")],
    ids=["tab", "bidi", "long"],
)
def test_a_marker_with_a_hostile_key_is_rejected(key: str, reason: str) -> None:
    result = parse_memory_markers(f'ok <memory scope="user" key="{key}">body</memory> done')
    assert result.markers == []
    [rejected] = result.rejected
    assert reason in rejected.reason and "the key" in rejected.reason


def test_a_marker_with_a_200_character_key_is_kept() -> None:
    result = parse_memory_markers(f'<memory scope="user" key="{"k" * 200}">body</memory>')
    assert [m.key for m in result.markers] == ["k" * 200]
