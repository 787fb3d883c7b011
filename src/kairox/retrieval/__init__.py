"""Retrieval: workspace RAG index, embedding backends, knowledge bases and the composite retriever."""
