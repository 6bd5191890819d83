"""Evaluation through a store: index a dataset into a collection (reused when unchanged) and evaluate there.

The config's retriever is mapped to the store's (``ragline.retrieve.store.for_store``): ``bm25`` ->
``store-bm25``, ``dense`` -> ``store-dense``, ``hybrid`` -> ``store-hybrid`` (RRF by the server; the embedded
default is z-score fusion, so hybrid scores differ by design, see docs/scale.md). Other store retrievers are
built as named.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ragline.components import build
from ragline.config import PipelineConfig
from ragline.eval.datasets import Dataset
from ragline.eval.retrieval import DEFAULT_METRICS, RetrievalResult, evaluate_retriever
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.retrieve.base import needs_embeddings
from ragline.retrieve.store import for_store
from ragline.store import open_store


def evaluate_on_store(
    dataset: Dataset,
    config: PipelineConfig,
    uri: str,
    metrics: Sequence[str] = DEFAULT_METRICS,
    depth: int = 1000,
) -> RetrievalResult:
    """Sync ``dataset``'s corpus (chunked as ``config`` says) into ``uri`` and evaluate its retriever there.

    A collection already holding the same chunks is reused: sync compares content hashes, so only
    changed chunks are sent (and embedded). Stamps that differ from ``config``'s are an error.
    """
    spec = for_store(config.retrieve.retriever)
    embed = needs_embeddings(spec)
    settings = dataclasses.replace(config.index.settings(config.ingest, embed=embed), vector_index="flat")
    collection = open_store(uri, settings)
    try:
        ingest = IngestConfig(config.ingest.chunker, config.ingest.context)
        chunks, _ = chunk_documents(dataset.corpus, ingest)
        collection.sync(chunks)
        collection.commit()
        doc_of = None
        if ingest.chunker != "none":
            doc_of = {d.id: d.document_id for d in chunks}
        retriever: Any = build("retriever", spec, index=collection)
        return evaluate_retriever(dataset, retriever, tuple(metrics), depth, doc_of)
    finally:
        collection.close()
