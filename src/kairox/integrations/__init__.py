"""Adapters that plug Kairox into agent frameworks, each behind its extra.

``kairox.integrations.openai_agents`` (``pip install "kairox[openai-agents]"``) and
``kairox.integrations.langgraph`` (``pip install "kairox[langgraph]"``) use only the library API
and the facade, like any other surface.
"""
