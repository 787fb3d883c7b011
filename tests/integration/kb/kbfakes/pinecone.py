"""A fake Pinecone data plane: ``POST /records/namespaces/{namespace}/search`` only.

Implements the documented request (``query.inputs.text``, ``query.top_k``, ``fields``; headers
``Api-Key`` and ``X-Pinecone-API-Version``) and response (``result.hits[]._id/_score/fields``,
``usage``), and Pinecone's error body ``{"error": {"code", "message"}, "status"}``.
"""

from __future__ import annotations

import re

from kbfakes._server import FakeServer, Reply, Request, require
from kbfakes.corpus import DOCUMENTS, Doc, rank

_PATH = re.compile(r"^/records/namespaces/([^/?]+)/search$")
_CODES = {401: "UNAUTHENTICATED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "UNKNOWN"}


class FakePinecone(FakeServer):
    def __init__(
        self,
        *,
        api_key: str = "pc-test-key",
        namespace: str = "docs",
        text_field: str = "chunk_text",
        docs: tuple[Doc, ...] = DOCUMENTS,
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.namespace = namespace
        self.text_field = text_field
        self.docs = docs

    def error_body(self, status: int) -> object:
        code = _CODES.get(status, "UNAVAILABLE" if status >= 500 else "INVALID_ARGUMENT")
        return {"error": {"code": code, "message": f"fake pinecone {status}"}, "status": status}

    def invalid(self, message: str) -> Reply:
        return Reply(
            400, {"error": {"code": "INVALID_ARGUMENT", "message": message}, "status": 400}
        )

    def handle(self, request: Request) -> Reply:
        match = _PATH.match(request.path)
        require(request.method == "POST" and match is not None, f"no route {request.path}")
        assert match is not None
        if request.headers.get("api-key") != self.api_key:
            return Reply(401, self.error_body(401))
        require("x-pinecone-api-version" in request.headers, "X-Pinecone-API-Version is required")
        require(
            request.headers.get("content-type", "").startswith("application/json"),
            "Content-Type must be application/json",
        )
        if match.group(1) != self.namespace:
            return Reply(404, self.error_body(404))
        body = request.json()
        require(isinstance(body, dict), "body must be an object")
        assert isinstance(body, dict)
        query = body.get("query")
        require(isinstance(query, dict), "query is required")
        assert isinstance(query, dict)
        inputs = query.get("inputs")
        require(
            isinstance(inputs, dict) and isinstance(inputs.get("text"), str),
            "query.inputs.text must be a string (integrated embedding)",
        )
        top_k = query.get("top_k")
        require(isinstance(top_k, int) and 1 <= top_k <= 10_000, "query.top_k must be 1..10000")
        fields = body.get("fields")
        require(
            isinstance(fields, list) and all(isinstance(f, str) for f in fields),
            "fields must be a list of strings",
        )
        assert isinstance(inputs, dict) and isinstance(top_k, int) and isinstance(fields, list)
        hits = []
        for doc, score in rank(inputs["text"], self.docs)[:top_k]:
            record = {self.text_field: doc.text, "title": doc.title}
            hits.append(
                {
                    "_id": doc.id,
                    "_score": round(0.05 + score, 6),
                    "fields": {name: record[name] for name in fields if name in record},
                }
            )
        usage = {"read_units": 1, "embed_total_tokens": len(inputs["text"].split())}
        return Reply(200, {"result": {"hits": hits}, "usage": usage})
