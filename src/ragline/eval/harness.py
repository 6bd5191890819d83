"""The evaluation harness: a dataset and pipeline configs in, metrics, paired tests and grades out.

``ragline eval`` is a thin layer over this module. One in-memory index is built per dataset from the
first config's ingest and index stages (every config compared in one run must share them: they
differ in retrieval, reranking or reading); then either

- **retrieval**: each config's first stage (and second stage, when it has transforms or a reranker)
  ranks every judged query (with per-query filters, among that query's own passages); metrics per
  query; paired tests of every later config against the first, for every metric asked; or
- **answers**: the first config's whole pipeline answers each question of ``questions.jsonl``
  (when the config has a reader), graded correct / wrong / abstained by type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragline.answer.pipeline import RAGPipeline
from ragline.components import component, spec_of
from ragline.config import PipelineConfig
from ragline.errors import ConfigError
from ragline.eval.datasets import Dataset
from ragline.eval.retrieval import DEFAULT_METRICS, RetrievalResult, evaluate_retriever
from ragline.eval.stats import compare
from ragline.index import Index
from ragline.index.filters import FilterLike
from ragline.ingest.pipeline import IngestConfig, build_index
from ragline.retrieve.base import needs_embeddings


@dataclass
class EvalIndex:
    """The dataset's corpus indexed as the configs say; ``doc_of`` maps chunk ids to documents."""

    index: Index
    ingest: IngestConfig
    doc_of: dict[str, str] | None = field(default=None, repr=False)


def config_needs_embeddings(config: PipelineConfig) -> bool:
    """Whether ``config`` searches vectors anywhere: its retriever, or a reader that retrieves by itself (the
    agent's ladder and reranker declare theirs as ``needs_embeddings``, as retrievers do)."""
    if needs_embeddings(config.retrieve.retriever):
        return True
    if not config.read.enabled:
        return False
    name, params = spec_of(config.read.reader)
    flag = getattr(component("reader", name).factory, "needs_embeddings", False)
    return bool(flag(params) if callable(flag) else flag)


def build_eval_index(dataset: Dataset, configs: Sequence[PipelineConfig]) -> EvalIndex:
    """One in-memory index for ``configs`` (vectors only when one of their retrievers needs them)."""
    first = configs[0]
    for config in configs[1:]:
        if (config.ingest, config.index) != (first.ingest, first.index):
            raise ConfigError("configs compared in one evaluation must share their [ingest] and [index] stages")
    if not dataset.corpus:
        raise ConfigError(f"{dataset.path} has no documents (corpus.jsonl or document files): nothing to search")
    embed = any(config_needs_embeddings(c) for c in configs)
    ingest = IngestConfig(first.ingest.chunker, first.ingest.context)
    index = build_index(dataset.corpus, ingest, first.index.settings(embed=embed))
    doc_of = None
    if ingest.chunker != "none":
        doc_of = {d.id: d.document_id for d in index.documents()}
    return EvalIndex(index, ingest, doc_of)


def retrieval_ranker(config: PipelineConfig, index: Index) -> Any:
    """What ranks for a retrieval evaluation: the retriever alone, or the pipeline's first and second stage."""
    if config.transform.transforms or config.rerank.reranker:
        return RAGPipeline.from_config(config, index, reader=False)
    return RAGPipeline.from_config(config, index, reader=False).retriever_obj


def evaluate_retrieval(
    dataset: Dataset,
    configs: Sequence[PipelineConfig],
    built: EvalIndex,
    metrics: Sequence[str] = DEFAULT_METRICS,
    depth: int = 1000,
    filters: Mapping[str, FilterLike] | None = None,
) -> list[RetrievalResult]:
    """Each config's ranking of the judged queries, scored; ``filters`` (query id -> filter) restricts
    a query's search (``--per-question-context``: to its question's own passages)."""
    rankers = [retrieval_ranker(config, built.index) for config in configs]
    return [evaluate_retriever(dataset, r, tuple(metrics), depth, built.doc_of, filters) for r in rankers]


def paired_comparisons(
    labels: Sequence[str], results: Sequence[RetrievalResult], metrics: Sequence[str]
) -> list[dict[str, Any]]:
    """Every later result against the first, on every metric (randomization, t-test, bootstrap CI)."""
    return [
        {
            "baseline": labels[0],
            "retriever": label,
            "metric": metric,
            **compare(results[0].per_query_metric(metric), result.per_query_metric(metric)),
        }
        for label, result in zip(labels[1:], results[1:])
        for metric in metrics
    ]
