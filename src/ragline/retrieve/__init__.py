"""Retrieval: turning a query into ranked documents, and combining the rankings of several retrievers."""
