"""Kairox: memory, retrieval and context assembly for LLM agents."""
