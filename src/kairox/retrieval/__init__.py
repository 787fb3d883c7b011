"""Retrieval: the workspace RAG index, embedders, knowledge bases and the composite retriever."""
