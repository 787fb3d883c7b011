"""AWS Signature Version 4 for the Bedrock client, with hashlib and hmac only (no boto3).

Follows "Create a signed AWS API request" (docs.aws.amazon.com/IAM/latest/UserGuide/
create-signed-request.html); the unit tests check it against the AWS SigV4 test suite vectors.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import quote, unquote

import httpx

ALGORITHM = "AWS4-HMAC-SHA256"


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class SignedParts:
    """The intermediate strings, kept for tests and debugging (they hold no secret)."""

    canonical_request: str
    string_to_sign: str
    signature: str
    headers: dict[str, str]


def sign(
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    credentials: AwsCredentials,
    region: str,
    service: str,
    now: datetime,
    double_encode_path: bool = True,
) -> SignedParts:
    """Sign a request; ``headers`` of the result are the request's headers plus the auth ones.

    Every header given is signed, plus ``host`` and ``x-amz-date`` (and
    ``x-amz-security-token`` with temporary credentials). Non-S3 services encode each path
    segment twice, which ``double_encode_path`` does to the path as it is sent.
    """
    parsed = httpx.URL(url)
    amz_date = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    out: dict[str, str] = {name.lower(): value for name, value in headers.items()}
    out.setdefault("host", parsed.netloc.decode("ascii"))
    out["x-amz-date"] = amz_date
    if credentials.session_token:
        out["x-amz-security-token"] = credentials.session_token
    signed_names = sorted(out)
    canonical_headers = "".join(f"{name}:{_trim(out[name])}\n" for name in signed_names)
    signed_headers = ";".join(signed_names)
    canonical_request = "\n".join(
        [
            method.upper(),
            _canonical_uri(parsed.raw_path.split(b"?", 1)[0].decode("ascii"), double_encode_path),
            _canonical_query(parsed.query.decode("ascii")),
            canonical_headers,
            signed_headers,
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join(
        [ALGORITHM, amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()]
    )
    key = signing_key(credentials.secret_access_key, day, region, service)
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    out["authorization"] = (
        f"{ALGORITHM} Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={signed_headers}, Signature={signature}"
    )
    return SignedParts(canonical_request, string_to_sign, signature, out)


def signing_key(secret: str, day: str, region: str, service: str) -> bytes:
    """kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request")."""
    key = _hmac(f"AWS4{secret}".encode(), day)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return key


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def _encode(text: str) -> str:
    """AWS UriEncode: every byte except unreserved characters A-Z a-z 0-9 - _ . ~."""
    return quote(text, safe="-_.~")


def _canonical_uri(path: str, double_encode: bool) -> str:
    if not path:
        return "/"
    segments = path.split("/")
    if double_encode:
        return "/".join(_encode(segment) for segment in segments)
    return "/".join(_encode(unquote(segment)) for segment in segments)


def _canonical_query(query: str) -> str:
    if not query:
        return ""
    pairs = []
    for item in query.split("&"):
        name, _, value = item.partition("=")
        pairs.append((_encode(unquote(name)), _encode(unquote(value))))
    return "&".join(f"{name}={value}" for name, value in sorted(pairs))


def _trim(value: str) -> str:
    return " ".join(value.split())
