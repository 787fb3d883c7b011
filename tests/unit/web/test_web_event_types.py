"""The web pages listen for every event type the log can hold: an event type missing from
``EVENT_TYPES`` never reaches a page's live stream (EventSource delivers named events only)."""

from __future__ import annotations

import re
import typing
from importlib.resources import files

from kairox.core.events import EventPayload


def test_the_pages_listen_for_every_event_type() -> None:
    source = files("kairox.web").joinpath("static/common.js").read_text()
    block = re.search(r"export const EVENT_TYPES = \[(.*?)\];", source, re.S)
    assert block is not None
    listened = re.findall(r'"(\w+)"', block.group(1))
    union = typing.get_args(typing.get_args(EventPayload)[0])
    logged = [cls.model_fields["type"].default for cls in union]
    assert sorted(listened) == sorted(logged)
