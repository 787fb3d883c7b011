"""Configs and environments that point Kairox at the fakes."""

from __future__ import annotations

from kairox.core.kb_config import BedrockConfig, PineconeConfig
from kbfakes.bedrock import FakeBedrock
from kbfakes.pinecone import FakePinecone


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
