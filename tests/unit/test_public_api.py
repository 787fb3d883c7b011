"""Guards the public API: removing or renaming a name here is a breaking change."""

import kairox

EXPECTED = {
    "AppFacade",
    "AssemblyInput",
    "Budget",
    "ConfigError",
    "ContextAssembler",
    "ContextOverflow",
    "InvalidInput",
    "KairoxError",
    "MarkerStream",
    "MemoryDecisionError",
    "MemoryMarker",
    "MemoryScope",
    "MemoryStatus",
    "MemoryStore",
    "MissingExtra",
    "ModelError",
    "NotFound",
    "ParseResult",
    "Quotas",
    "RejectedMarker",
    "RetrievalError",
    "SessionBusy",
    "StoreError",
    "Tokenizer",
    "TokenizerRegistry",
    "extract_memory_markers",
    "parse_memory_markers",
    "resolve_window",
    "strip_memory_markers",
}


def test_public_api_is_exactly_the_curated_list() -> None:
    assert set(kairox.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(kairox, name) is not None


def test_every_error_derives_from_the_root() -> None:
    for name in EXPECTED:
        obj = getattr(kairox, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, kairox.KairoxError)
