"""Loopback fakes of the Pinecone, Weaviate and Bedrock query APIs, and their shared corpus."""

from kbfakes._server import FakeServer, Reply, Request
from kbfakes.bedrock import FakeBedrock
from kbfakes.corpus import DOCUMENTS, RELEVANT_ID, RELEVANT_QUERY, RELEVANT_WORD, Doc
from kbfakes.pinecone import FakePinecone
from kbfakes.weaviate import FakeWeaviate

__all__ = [
    "DOCUMENTS",
    "RELEVANT_ID",
    "RELEVANT_QUERY",
    "RELEVANT_WORD",
    "Doc",
    "FakeBedrock",
    "FakePinecone",
    "FakeServer",
    "FakeWeaviate",
    "Reply",
    "Request",
]
