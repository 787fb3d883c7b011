"""Configs, environments and a recording retry policy that point Kairox at the fakes."""

from __future__ import annotations

from dataclasses import dataclass, field

from kairox.core.kb_config import BedrockConfig, PineconeConfig, WeaviateConfig
from kairox.retrieval.knowledge_bases._http import RetryPolicy
from kbfakes.bedrock import FakeBedrock
from kbfakes.pinecone import FakePinecone
from kbfakes.weaviate import FakeWeaviate


@dataclass
class RecordedSleeps:
    """Stands in for ``asyncio.sleep`` so backoff is observable and costs no time."""

    delays: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def fast_retry(sleeps: RecordedSleeps, *, attempts: int = 3) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_delay_s=0.001, max_delay_s=5.0, sleep=sleeps)


def pinecone_setup(
    server: FakePinecone, **overrides: object
) -> tuple[PineconeConfig, dict[str, str]]:
    config = PineconeConfig.model_validate(
        {
            "kind": "pinecone",
            "host": server.url,
            "namespace": server.namespace,
            "api_key_env": "KAIROX_TEST_PINECONE_KEY",
            "text_field": server.text_field,
            "title_field": "title",
            "timeout_s": 5.0,
            **overrides,
        }
    )
    return config, {"KAIROX_TEST_PINECONE_KEY": server.api_key}


def weaviate_setup(
    server: FakeWeaviate, **overrides: object
) -> tuple[WeaviateConfig, dict[str, str]]:
    config = WeaviateConfig.model_validate(
        {
            "kind": "weaviate",
            "url": server.url,
            "collection": server.collection,
            "api_key_env": "KAIROX_TEST_WEAVIATE_KEY" if server.api_key else None,
            "title_property": "title",
            "timeout_s": 5.0,
            **overrides,
        }
    )
    env = {"KAIROX_TEST_WEAVIATE_KEY": server.api_key} if server.api_key else {}
    return config, env


def bedrock_setup(server: FakeBedrock, **overrides: object) -> tuple[BedrockConfig, dict[str, str]]:
    config = BedrockConfig.model_validate(
        {
            "kind": "bedrock",
            "knowledge_base_id": server.knowledge_base_id,
            "region": server.region,
            "endpoint_url": server.url,
            "access_key_id_env": "KAIROX_TEST_AWS_KEY_ID",
            "secret_access_key_env": "KAIROX_TEST_AWS_SECRET",
            "session_token_env": "KAIROX_TEST_AWS_TOKEN",
            "timeout_s": 5.0,
            **overrides,
        }
    )
    env = {
        "KAIROX_TEST_AWS_KEY_ID": server.access_key_id,
        "KAIROX_TEST_AWS_SECRET": server.secret_access_key,
    }
    if server.session_token:
        env["KAIROX_TEST_AWS_TOKEN"] = server.session_token
    return config, env
