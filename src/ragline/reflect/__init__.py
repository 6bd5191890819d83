"""Reflection: readers that decide whether and how to retrieve, and the critics trained for them.

``self_rag`` (Self-RAG inference), ``crag`` (Corrective RAG), ``router`` (query routing), over the critics of
``critics`` (logistic regressions on ``features``, trained by ``train`` on the training worlds).
"""
