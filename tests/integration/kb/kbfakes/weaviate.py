"""A fake Weaviate: ``POST /v1/graphql`` answering ``Get`` with hybrid, bm25 or nearText.

It parses the GraphQL the client sends (collection, operator, string literal, ``alpha``,
``limit``, properties, ``_additional``), answers GraphQL errors the way Weaviate does (HTTP 200
with ``errors``), and returns ``_additional.score`` as a string like the real server.
"""

from __future__ import annotations

import json
import re
import uuid

from kbfakes._server import FakeServer, Reply, Request, require
from kbfakes.corpus import DOCUMENTS, Doc, rank

_HEAD = re.compile(
    r"^\s*\{\s*Get\s*\{\s*(?P<coll>[_A-Za-z]\w*)\s*\(\s*(?P<op>hybrid|bm25|nearText)\s*:\s*"
    r"\{\s*(?P<arg>query|concepts)\s*:\s*"
)
_TAIL = re.compile(
    r"\s*(?:,\s*alpha\s*:\s*(?P<alpha>[0-9.]+)\s*)?\}\s*,\s*limit\s*:\s*(?P<limit>\d+)\s*\)\s*"
    r"\{\s*(?P<fields>[\w\s]+?)\s*_additional\s*\{\s*(?P<additional>[\w\s]+?)\s*\}\s*\}\s*\}\s*\}\s*$"
)
_ADDITIONAL = {"id", "score", "distance", "certainty", "explainScore"}


class FakeWeaviate(FakeServer):
    def __init__(
        self,
        *,
        api_key: str | None = "wv-test-key",
        collection: str = "Passage",
        docs: tuple[Doc, ...] = DOCUMENTS,
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.collection = collection
        self.docs = docs
        self.queries: list[tuple[str, str, float | None]] = []
        """(operator, decoded query text, alpha) of each accepted query."""

    def error_body(self, status: int) -> object:
        return {"error": [{"message": f"fake weaviate {status}"}]}

    def invalid(self, message: str) -> Reply:
        return Reply(422, {"error": [{"message": message}]})

    def handle(self, request: Request) -> Reply:
        require(
            request.method == "POST" and request.path == "/v1/graphql", f"no route {request.path}"
        )
        if (
            self.api_key is not None
            and request.headers.get("authorization") != f"Bearer {self.api_key}"
        ):
            return Reply(401, {"code": 401, "message": "anonymous access not enabled"})
        body = request.json()
        require(isinstance(body, dict) and isinstance(body.get("query"), str), "body needs query")
        assert isinstance(body, dict)
        text: str = body["query"]
        head = _HEAD.match(text)
        if head is None:
            return self._graphql_error("Syntax Error: unexpected query shape")
        op, arg = head.group("op"), head.group("arg")
        require((op == "nearText") == (arg == "concepts"), f"{op} does not take {arg}")
        decoder = json.JSONDecoder()
        pos = head.end()
        if arg == "concepts":
            require(text[pos] == "[", "concepts must be a list")
            query, pos = decoder.raw_decode(text, pos + 1)
            require(text[pos] == "]", "concepts must hold one string")
            pos += 1
        else:
            query, pos = decoder.raw_decode(text, pos)
        require(isinstance(query, str), "the search text must be a string")
        tail = _TAIL.match(text, pos)
        if tail is None:
            return self._graphql_error("Syntax Error: unexpected tokens after the search text")
        alpha = float(tail.group("alpha")) if tail.group("alpha") else None
        require(alpha is None or op == "hybrid", "alpha belongs to hybrid")
        if head.group("coll") != self.collection:
            return self._graphql_error(
                f'Cannot query field "{head.group("coll")}" on type "GetObjectsObj".'
            )
        fields = tail.group("fields").split()
        unknown = [f for f in fields if f not in ("text", "title")]
        if unknown:
            return self._graphql_error(
                f'Cannot query field "{unknown[0]}" on type "{self.collection}".'
            )
        additional = tail.group("additional").split()
        require(set(additional) <= _ADDITIONAL, f"unknown _additional fields {additional}")
        self.queries.append((op, query, alpha))
        rows = []
        ranked = rank(query, self.docs)
        if op == "bm25":
            ranked = [(doc, score) for doc, score in ranked if score > 0]
        for doc, score in ranked[: int(tail.group("limit"))]:
            row: dict[str, object] = {name: getattr(doc, name) for name in fields}
            extra: dict[str, object] = {}
            for name in additional:
                if name == "id":
                    extra["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, doc.id))
                elif name == "score":
                    extra["score"] = None if op == "nearText" else f"{score:.7f}"
                elif name == "distance":
                    extra["distance"] = round(1.0 / (1.0 + score), 7) if op == "nearText" else None
                else:
                    extra[name] = None
            row["_additional"] = extra
            rows.append(row)
        return Reply(200, {"data": {"Get": {self.collection: rows}}})

    def _graphql_error(self, message: str) -> Reply:
        return Reply(200, {"data": {"Get": None}, "errors": [{"message": message}]})
