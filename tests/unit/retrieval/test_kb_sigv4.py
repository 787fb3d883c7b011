"""The SigV4 signer against vectors AWS publishes (the SigV4 test suite and the IAM example).

Vectors: docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html (credentials
AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, us-east-1, service "service",
2015-08-30T12:36:00Z) and the ListUsers example of "Create a signed AWS API request".
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kairox.retrieval.knowledge_bases._sigv4 import AwsCredentials, sign, signing_key

KEY_ID = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
WHEN = datetime(2015, 8, 30, 12, 36, tzinfo=UTC)
HOST = {"Host": "example.amazonaws.com"}


def _sign(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes = b"",
    *,
    token: str | None = None,
    service: str = "service",
) -> str:
    return sign(
        method=method,
        url=url,
        headers=headers,
        body=body,
        credentials=AwsCredentials(KEY_ID, SECRET, token),
        region="us-east-1",
        service=service,
        now=WHEN,
    ).headers["authorization"]


@pytest.mark.parametrize(
    ("name", "method", "url", "extra", "body", "signed", "signature"),
    [
        (
            "get-vanilla",
            "GET",
            "https://example.amazonaws.com/",
            {},
            b"",
            "host;x-amz-date",
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ),
        (
            "post-vanilla",
            "POST",
            "https://example.amazonaws.com/",
            {},
            b"",
            "host;x-amz-date",
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        ),
        (
            "get-vanilla-query-order-key-case",
            "GET",
            "https://example.amazonaws.com/?Param2=value2&Param1=value1",
            {},
            b"",
            "host;x-amz-date",
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
        ),
        (
            "post-x-www-form-urlencoded",
            "POST",
            "https://example.amazonaws.com/",
            {"Content-Type": "application/x-www-form-urlencoded"},
            b"Param1=value1",
            "content-type;host;x-amz-date",
            "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
        ),
    ],
)
def test_aws_test_suite_vectors(
    name: str,
    method: str,
    url: str,
    extra: dict[str, str],
    body: bytes,
    signed: str,
    signature: str,
) -> None:
    assert _sign(method, url, {**HOST, **extra}, body) == (
        f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        f"SignedHeaders={signed}, Signature={signature}"
    ), name


def test_session_token_vector_signs_and_sends_the_token() -> None:
    token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"
    parts = sign(
        method="GET",
        url="https://example.amazonaws.com/",
        headers=HOST,
        body=b"",
        credentials=AwsCredentials(KEY_ID, SECRET, token),
        region="us-east-1",
        service="service",
        now=WHEN,
    )

    assert parts.headers["x-amz-security-token"] == token
    assert parts.signature == "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"
    assert "SignedHeaders=host;x-amz-date;x-amz-security-token," in parts.headers["authorization"]


def test_the_iam_list_users_example() -> None:
    authorization = _sign(
        "GET",
        "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
        {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
        service="iam",
    )

    assert authorization.endswith(
        "SignedHeaders=content-type;host;x-amz-date, "
        "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    )


def test_the_documented_signing_key() -> None:
    assert signing_key(SECRET, "20150830", "us-east-1", "iam").hex() == (
        "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"
    )


def test_host_comes_from_the_url_with_its_port_and_the_date_from_the_clock() -> None:
    parts = sign(
        method="POST",
        url="http://127.0.0.1:8123/knowledgebases/KB1/retrieve",
        headers={},
        body=b"{}",
        credentials=AwsCredentials("AK", "SK"),
        region="eu-west-1",
        service="bedrock",
        now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )

    assert parts.headers["host"] == "127.0.0.1:8123"
    assert parts.headers["x-amz-date"] == "20260102T030405Z"
    assert parts.canonical_request.splitlines()[1] == "/knowledgebases/KB1/retrieve"
    assert "Credential=AK/20260102/eu-west-1/bedrock/aws4_request" in parts.headers["authorization"]


def test_non_s3_paths_are_encoded_twice() -> None:
    parts = sign(
        method="GET",
        url="https://example.amazonaws.com/model/a%3Ab/x",
        headers={},
        body=b"",
        credentials=AwsCredentials("AK", "SK"),
        region="us-east-1",
        service="bedrock",
        now=WHEN,
    )

    assert parts.canonical_request.splitlines()[1] == "/model/a%253Ab/x"


def test_secrets_stay_out_of_the_repr() -> None:
    text = repr(AwsCredentials("AKID", "the-secret", "the-token"))
    assert "the-secret" not in text and "the-token" not in text
