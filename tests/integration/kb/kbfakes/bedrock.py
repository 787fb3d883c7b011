"""A fake Bedrock Agent Runtime: ``POST /knowledgebases/{knowledgeBaseId}/retrieve`` only.

It checks the SigV4 ``Authorization`` header by recomputing the signature from the request as
received (its own small verifier, not the client's signer), answers AWS-style JSON errors with
``x-amzn-ErrorType``, and returns ``retrievalResults[].content.text/score/location``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from urllib.parse import quote

from kbfakes._server import FakeServer, Reply, Request, require
from kbfakes.corpus import DOCUMENTS, Doc, rank

_PATH = re.compile(r"^/knowledgebases/([^/?]+)/retrieve$")
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<day>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), "
    r"Signature=(?P<sig>[0-9a-f]{64})$"
)
_ERRORS = {
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}


class FakeBedrock(FakeServer):
    def __init__(
        self,
        *,
        access_key_id: str = "AKIDFAKEBEDROCK00001",
        secret_access_key: str = "fake/secret+key/for/tests",
        session_token: str | None = None,
        region: str = "us-east-1",
        knowledge_base_id: str = "KB12345678",
        docs: tuple[Doc, ...] = DOCUMENTS,
    ) -> None:
        super().__init__()
        self.access_key_id = access_key_id
        self.secret_access_key = secret_access_key
        self.session_token = session_token
        self.region = region
        self.knowledge_base_id = knowledge_base_id
        self.docs = docs

    def error_body(self, status: int) -> object:
        return {"message": f"fake bedrock {_ERRORS.get(status, 'error')}"}

    def fail_next(
        self, status: int, *, times: int = 1, headers: dict[str, str] | None = None
    ) -> None:
        typed = {"x-amzn-ErrorType": _ERRORS.get(status, "ValidationException"), **(headers or {})}
        super().fail_next(status, times=times, headers=typed)

    def invalid(self, message: str) -> Reply:
        return Reply(400, {"message": message}, {"x-amzn-ErrorType": "ValidationException"})

    def handle(self, request: Request) -> Reply:
        match = _PATH.match(request.path)
        require(request.method == "POST" and match is not None, f"no route {request.path}")
        assert match is not None
        problem = self._check_signature(request)
        if problem is not None:
            return Reply(403, {"message": problem}, {"x-amzn-ErrorType": problem.split(":")[0]})
        if match.group(1) != self.knowledge_base_id:
            return Reply(
                404,
                {"message": "knowledge base not found"},
                {"x-amzn-ErrorType": "ResourceNotFoundException"},
            )
        body = request.json()
        require(isinstance(body, dict), "body must be an object")
        assert isinstance(body, dict)
        query = body.get("retrievalQuery")
        require(
            isinstance(query, dict) and isinstance(query.get("text"), str), "retrievalQuery.text"
        )
        config = body.get("retrievalConfiguration", {})
        vector = config.get("vectorSearchConfiguration") if isinstance(config, dict) else None
        require(isinstance(vector, dict), "retrievalConfiguration.vectorSearchConfiguration")
        assert isinstance(vector, dict) and isinstance(query, dict)
        count = vector.get("numberOfResults", 5)
        require(isinstance(count, int) and 1 <= count <= 100, "numberOfResults must be 1..100")
        require(
            vector.get("overrideSearchType") in (None, "HYBRID", "SEMANTIC"),
            "overrideSearchType must be HYBRID or SEMANTIC",
        )
        assert isinstance(count, int)
        results = [
            {
                "content": {"text": doc.text, "type": "TEXT"},
                "location": {"type": "S3", "s3Location": {"uri": f"s3://kb-docs/{doc.id}.txt"}},
                "score": round(0.1 + score, 6),
                "metadata": {"x-amz-bedrock-kb-source-uri": f"s3://kb-docs/{doc.id}.txt"},
            }
            for doc, score in rank(query["text"], self.docs)[:count]
        ]
        return Reply(200, {"retrievalResults": results})

    def _check_signature(self, request: Request) -> str | None:
        auth = _AUTH.match(request.headers.get("authorization", ""))
        if auth is None:
            return "MissingAuthenticationTokenException: no SigV4 Authorization header"
        amz_date = request.headers.get("x-amz-date", "")
        if not re.fullmatch(r"\d{8}T\d{6}Z", amz_date) or amz_date[:8] != auth.group("day"):
            return "InvalidSignatureException: x-amz-date missing or not the credential day"
        if auth.group("key") != self.access_key_id:
            return "UnrecognizedClientException: the security token included is invalid"
        if (auth.group("region"), auth.group("service")) != (self.region, "bedrock"):
            return "InvalidSignatureException: credential scope must be <region>/bedrock"
        signed = auth.group("signed").split(";")
        if not {"host", "x-amz-date"} <= set(signed):
            return "InvalidSignatureException: host and x-amz-date must be signed"
        if self.session_token is not None and (
            request.headers.get("x-amz-security-token") != self.session_token
            or "x-amz-security-token" not in signed
        ):
            return "UnrecognizedClientException: the session token is missing or not signed"
        canonical = "\n".join(
            [
                request.method,
                "/".join(quote(part, safe="-_.~") for part in request.path.split("/")),
                "",
                "".join(f"{h}:{' '.join(request.headers.get(h, '').split())}\n" for h in signed),
                ";".join(signed),
                hashlib.sha256(request.body).hexdigest(),
            ]
        )
        scope = f"{auth.group('day')}/{self.region}/bedrock/aws4_request"
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
        )
        key = ("AWS4" + self.secret_access_key).encode()
        for part in (auth.group("day"), self.region, "bedrock", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, auth.group("sig")):
            return "InvalidSignatureException: the request signature does not match"
        return None
