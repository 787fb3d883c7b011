"""Loopback fakes of the Pinecone and Bedrock query APIs (and a stand-in for Weaviate's gRPC
client, ``kbfakes.weaviate``), with their shared corpus."""

from kbfakes._server import FakeServer, Reply, Request
from kbfakes.bedrock import FakeBedrock
from kbfakes.corpus import DOCUMENTS, RELEVANT_ID, RELEVANT_QUERY, RELEVANT_WORD, Doc
from kbfakes.pinecone import FakePinecone

__all__ = [
    "DOCUMENTS",
    "RELEVANT_ID",
    "RELEVANT_QUERY",
    "RELEVANT_WORD",
    "Doc",
    "FakeBedrock",
    "FakePinecone",
    "FakeServer",
    "Reply",
    "Request",
]
