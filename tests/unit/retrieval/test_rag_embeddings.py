"""Embedding registry, the hashing embedder, and the openai backend's HTTP error handling."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

from kairox.core.errors import ConfigError, MissingExtra, RetrievalError
from kairox.retrieval.embeddings import create_embedder, is_lexical
from kairox.retrieval.embeddings.bert_onnx import OnnxBertEmbedder
from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.embeddings.openai import OpenAIEmbedder
from kairox.retrieval.embeddings.sentence_transformers import (
    SentenceTransformersEmbedder,
    resolve_model_path,
)


def test_registry_builds_each_backend_from_its_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    default = create_embedder("hashing")
    assert isinstance(default, HashingEmbedder) and default.dimensions == 384
    assert create_embedder("hashing:128").model_id == "hashing:128"
    st = create_embedder("sentence-transformers:sentence-transformers/all-MiniLM-L6-v2")
    assert isinstance(st, OnnxBertEmbedder)  # onnxruntime is installed: no torch import
    assert st.model_id == "sentence-transformers:all-MiniLM-L6-v2"
    monkeypatch.setenv("KAIROX_EMBEDDINGS_RUNTIME", "torch")
    torch_backed = create_embedder("sentence-transformers:all-MiniLM-L6-v2")
    assert isinstance(torch_backed, SentenceTransformersEmbedder)
    assert torch_backed.model_id == st.model_id
    remote = create_embedder("openai:text-embedding-3-small", base_url="http://127.0.0.1:9/v1")
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.model_id == "openai:text-embedding-3-small"
    assert remote.url == "http://127.0.0.1:9/v1/embeddings"
    assert is_lexical(default) and not is_lexical(st) and not is_lexical(remote)


@pytest.mark.parametrize("spec", ["bogus", "openai", "openai:", "hashing:x", "hashing:4", "st:m"])
def test_registry_rejects_bad_specs_with_a_fix(spec: str) -> None:
    with pytest.raises(ConfigError, match="embeddings") as caught:
        create_embedder(spec)
    assert "Fix:" in str(caught.value)


def test_bundled_minilm_resolves_to_the_packaged_directory(tmp_path: Path) -> None:
    short = resolve_model_path("all-MiniLM-L6-v2")
    long = resolve_model_path("sentence-transformers/all-MiniLM-L6-v2")
    assert short == long and short[0] == "all-MiniLM-L6-v2"
    assert (Path(short[1]) / "modules.json").is_file()
    assert resolve_model_path(str(tmp_path)) == (str(tmp_path), str(tmp_path))


def test_hashing_is_lexical_similarity() -> None:
    embedder = HashingEmbedder(384)
    a, b, c = embedder.embed(["red apple pie", "apple pie recipe", "quantum field theory"])
    assert float(a @ b) > 0.3
    assert abs(float(a @ c)) < 0.3
    (empty,) = embedder.embed([""])
    assert np.isclose(np.linalg.norm(empty), 1.0)


def vectors_response(request: httpx.Request, dims: int = 3) -> httpx.Response:
    inputs = json.loads(request.content)["input"]
    data = [
        {"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0][:dims]}
        for i, t in enumerate(inputs)
    ]
    return httpx.Response(200, json={"object": "list", "data": list(reversed(data))})


def backend(handler: httpx.MockTransport, **kwargs: object) -> tuple[OpenAIEmbedder, list[float]]:
    sleeps: list[float] = []
    embedder = OpenAIEmbedder(
        "m",
        base_url="http://embed.test/v1",
        transport=handler,
        sleep=sleeps.append,
        **kwargs,  # type: ignore[arg-type]
    )
    return embedder, sleeps


def test_openai_sorts_by_index_normalises_and_sends_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return vectors_response(request)

    monkeypatch.setenv("MY_EMBED_KEY", "sekrit")
    embedder, _ = backend(httpx.MockTransport(handle), api_key_env="MY_EMBED_KEY", batch_size=2)
    out = embedder.embed(["a", "bbb", "cc"])
    assert out.shape == (3, 3) and out.dtype == np.float32
    expected = np.array([[1, 1, 0], [3, 1, 0], [2, 1, 0]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(out, expected)
    assert len(seen) == 2  # batches of two
    assert seen[0].headers["authorization"] == "Bearer sekrit"
    assert json.loads(seen[0].content) == {
        "model": "m",
        "input": ["a", "bbb"],
        "encoding_format": "float",
    }


def test_openai_retries_429_with_bounded_backoff_then_succeeds() -> None:
    replies = iter([429, 429, 503, 200])

    def handle(request: httpx.Request) -> httpx.Response:
        code = next(replies)
        if code != 200:
            headers = {"retry-after": "30"} if code == 503 else {}
            return httpx.Response(code, headers=headers, json={"error": {"message": "slow"}})
        return vectors_response(request)

    embedder, sleeps = backend(httpx.MockTransport(handle), backoff=0.25, max_backoff=4.0)
    assert embedder.embed(["x"]).shape == (1, 3)
    assert sleeps == [0.25, 0.5, 4.0]  # exponential, and Retry-After capped at max_backoff


def test_openai_gives_up_on_persistent_429_with_one_line() -> None:
    embedder, sleeps = backend(
        httpx.MockTransport(lambda r: httpx.Response(429, json={"error": {"message": "quota"}})),
        max_retries=3,
    )
    with pytest.raises(RetrievalError) as caught:
        embedder.embed(["x"])
    message = str(caught.value)
    assert "HTTP 429" in message and "after 4 attempts" in message and "quota" in message
    assert "\n" not in message and len(sleeps) == 3


@pytest.mark.parametrize(
    ("status", "body", "fragment"),
    [
        (401, {"error": {"message": "bad key"}}, "check $OPENAI_API_KEY"),
        (400, {"error": {"message": "input too long\nmore"}}, "HTTP 400"),
        (404, "not here", "not here"),
    ],
)
def test_openai_client_errors_are_not_retried(status: int, body: object, fragment: str) -> None:
    calls: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        return httpx.Response(status, json=body)

    embedder, _ = backend(httpx.MockTransport(handle))
    with pytest.raises(RetrievalError, match="openai:m") as caught:
        embedder.embed(["x"])
    assert fragment in str(caught.value) and "\n" not in str(caught.value)
    assert len(calls) == 1


@pytest.mark.parametrize(
    "payload",
    [
        '{"data": [{"embedding": [1.0, 2.0]}, {"embedding": [1.0, 2.0]}]}',  # two for one input
        '{"data": [{"embedding": "nope"}]}',
        '{"result": []}',
        '{"data": [{"embedding": [NaN, 1.0]}]}',
        "<html>gateway</html>",
    ],
)
def test_openai_malformed_answers_raise(payload: str) -> None:
    embedder, _ = backend(httpx.MockTransport(lambda r: httpx.Response(200, text=payload)))
    with pytest.raises(RetrievalError):
        embedder.embed(["x"])


def test_openai_per_token_answers_are_mean_pooled_one_input_per_request() -> None:
    sizes: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        inputs = json.loads(request.content)["input"]
        sizes.append(len(inputs))
        data = [{"index": i, "embedding": [[1.0, 0.0], [0.0, float(len(t))]]}
                for i, t in enumerate(inputs)]  # fmt: skip
        return httpx.Response(200, json={"data": data})

    embedder, _ = backend(httpx.MockTransport(handle))
    out = embedder.embed(["a", "bb"])
    assert sizes == [2, 1, 1]  # the batched answer is not trusted; then one per request
    assert np.allclose(out[1], np.array([1.0, 2.0]) / np.sqrt(5.0))
    embedder.embed(["c", "d"])
    assert sizes == [2, 1, 1, 1, 1]


def test_openai_unreachable_server_and_missing_key() -> None:
    embedder = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=2)
    with pytest.raises(RetrievalError, match=r"cannot reach http://127\.0\.0\.1:9/v1/embeddings"):
        embedder.embed(["x"])
    hosted = OpenAIEmbedder("m", api_key_env="KAIROX_TEST_NO_SUCH_KEY")
    with pytest.raises(RetrievalError, match="set the KAIROX_TEST_NO_SUCH_KEY"):
        hosted.embed(["x"])


def test_openai_dimensions_probe_and_empty_input() -> None:
    calls: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return vectors_response(request)

    embedder, _ = backend(httpx.MockTransport(handle))
    assert embedder.embed([]).shape == (0, 3)
    assert embedder.dimensions == 3 and len(calls) == 1
    assert OpenAIEmbedder("m", dimensions=7).embed([]).shape == (0, 7)


def test_sentence_transformers_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    embedder = SentenceTransformersEmbedder("all-MiniLM-L6-v2")
    with pytest.raises(MissingExtra, match=r"kairox\[embeddings\]"):
        embedder.embed(["x"])
