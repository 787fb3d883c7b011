"""Error mapping: SDK and transport exceptions become one-line StreamFailed items of one kind."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from kairox.models.anthropic import ANTHROPIC_ERRORS
from kairox.models.base import FailureKind
from kairox.models.failures import (
    DISCONNECT_REASON,
    FailureContext,
    SdkErrors,
    connection_detail,
    is_loopback,
    one_line,
    sdk_failure,
    transport_failure,
)
from kairox.models.openai import OPENAI_ERRORS

URL = "http://127.0.0.1:9/v1"
CTX = FailureContext(endpoint=URL, api_key_env="MY_KEY", model="m1", timeout_s=12.5)
REQ = httpx.Request("POST", URL + "/chat/completions")


def status_error(cls: type[openai.APIStatusError], code: int, message: str) -> BaseException:
    body = {"error": {"message": message, "type": "x"}}
    return cls(message, response=httpx.Response(code, request=REQ, json=body), body=body)


def connect_error() -> BaseException:
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as os_err:
            raise httpx.ConnectError("[Errno 111] Connection refused") from os_err
    except httpx.ConnectError as cause:
        try:
            raise openai.APIConnectionError(request=REQ) from cause
        except openai.APIConnectionError as exc:
            return exc


@pytest.mark.parametrize(
    ("exc", "kind", "fragment"),
    [
        (connect_error(), "connection", f"cannot reach {URL}: connection refused; is the server"),
        (openai.APITimeoutError(request=REQ), "timeout", "within 12.5 s (timeout)"),
        (
            status_error(openai.AuthenticationError, 401, "bad key"),
            "auth",
            "authentication failed: check the API key in $MY_KEY",
        ),
        (status_error(openai.PermissionDeniedError, 403, "no"), "auth", "permission denied"),
        (status_error(openai.RateLimitError, 429, "slow"), "rate_limit", "HTTP 429"),
        (
            status_error(openai.BadRequestError, 400, "max_tokens too big"),
            "bad_request",
            "request rejected (HTTP 400): max_tokens too big",
        ),
        (status_error(openai.NotFoundError, 404, "no model"), "bad_request", "model name 'm1'"),
        (
            status_error(openai.InternalServerError, 500, "boom\nstack"),
            "other",
            "server error (HTTP 500)",
        ),
        (httpx.RemoteProtocolError("peer closed"), "disconnect", DISCONNECT_REASON),
        (httpx.ReadError("reset"), "disconnect", DISCONNECT_REASON),
        (httpx.ReadTimeout("slow"), "timeout", "(timeout)"),
        (ValueError("weird"), "other", "ValueError: weird"),
    ],
)
def test_openai_exceptions_map_to_kinds(
    exc: BaseException, kind: FailureKind, fragment: str
) -> None:
    failure = sdk_failure(exc, OPENAI_ERRORS, CTX)
    assert failure.kind == kind
    assert fragment in failure.reason
    assert "\n" not in failure.reason


def test_anthropic_classes_map_the_same_way() -> None:
    resp = httpx.Response(401, request=REQ, json={"type": "error"})
    auth = anthropic.AuthenticationError("invalid x-api-key", response=resp, body=None)
    assert sdk_failure(auth, ANTHROPIC_ERRORS, CTX).kind == "auth"
    timeout = anthropic.APITimeoutError(request=REQ)
    assert sdk_failure(timeout, ANTHROPIC_ERRORS, CTX).kind == "timeout"
    # an openai error is not an anthropic one: it falls through to "other"
    assert sdk_failure(openai.APITimeoutError(request=REQ), ANTHROPIC_ERRORS, CTX).kind == "other"


def test_connection_error_caused_by_a_dropped_stream_is_a_disconnect() -> None:
    try:
        try:
            raise httpx.RemoteProtocolError("incomplete chunked read")
        except httpx.RemoteProtocolError as cause:
            raise openai.APIConnectionError(request=REQ) from cause
    except openai.APIConnectionError as exc:
        assert sdk_failure(exc, OPENAI_ERRORS, CTX).kind == "disconnect"


def test_transport_failure_ignores_non_transport_errors() -> None:
    assert transport_failure(KeyError("x"), CTX) is None
    failure = transport_failure(httpx.ConnectError("All connection attempts failed"), CTX)
    assert failure is not None
    assert failure.reason == f"cannot reach {URL}: connection refused; is the server running?"


def test_generic_sdk_classes_are_pluggable() -> None:
    class Boom(Exception):
        pass

    class Auth(Exception):
        pass

    sdk = SdkErrors(Boom, Boom, Auth, Boom, Boom, Boom, Boom, Boom, Boom, Boom)
    assert sdk_failure(Auth(), sdk, CTX).kind == "auth"
    no_env = FailureContext(endpoint=URL, api_key_env=None, model="m", timeout_s=1)
    assert "api_key_env" in sdk_failure(Auth(), sdk, no_env).reason


def test_one_line_collapses_and_caps() -> None:
    assert one_line("a\n  b\tc") == "a b c"
    capped = one_line("x" * 500, 50)
    assert len(capped) == 50
    assert capped.endswith("...")


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:1234", True),
        ("http://[::1]:80/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.2/v1", False),
        (None, False),
    ],
)
def test_is_loopback(url: str | None, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_connection_detail_names_dns_failures() -> None:
    err = httpx.ConnectError("[Errno -2] Name or service not known")
    assert connection_detail(err) == "host not found"
