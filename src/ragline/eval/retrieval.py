"""Evaluate a retriever on a dataset: run every judged query, score the run, keep per-query values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragline.eval.datasets import Dataset
from ragline.eval.metrics import Run, evaluate, mean_scores
from ragline.index.filters import FilterLike
from ragline.progress import track
from ragline.retrieve.base import Retriever

DEFAULT_METRICS = ("ndcg@10", "recall@100", "mrr@10", "map@100", "p@10", "hit@10", "failed@10", "recall@1000")


@dataclass
class RetrievalResult:
    retriever: dict[str, Any]
    metrics: dict[str, float]
    per_query: dict[str, dict[str, float]] = field(repr=False)
    run: Run = field(repr=False)

    def per_query_metric(self, metric: str) -> dict[str, float]:
        """Query id -> value of one metric (the input of the paired tests in ``eval.stats``)."""
        return {qid: values[metric] for qid, values in self.per_query.items()}


def run_queries(
    retriever: Retriever,
    queries: dict[str, str],
    depth: int = 1000,
    doc_of: Mapping[str, str] | None = None,
    filters: Mapping[str, FilterLike] | None = None,
) -> Run:
    """The top ``depth`` documents of every query, as a run (query id -> doc id -> score).

    With ``doc_of`` (chunk id -> document id) the index holds chunks: each document scores as its best
    chunk (MaxP, Dai & Callan 2019), and ``3 * depth`` chunks are retrieved to fill ``depth`` documents.
    ``filters`` (query id -> filter) restricts a query's search, e.g. to its own passages.
    """
    run: Run = {}
    filters = filters or {}
    for qid, text in track(queries.items(), f"{retriever.name}: searching", total=len(queries)):
        if doc_of is None:
            run[qid] = dict(retriever.rank(text, depth, filters.get(qid)))
            continue
        ranking: dict[str, float] = {}
        for chunk_id, score in retriever.rank(text, 3 * depth, filters.get(qid)):
            ranking.setdefault(doc_of.get(chunk_id, chunk_id), score)  # best first: the first is the best
        run[qid] = dict(list(ranking.items())[:depth])
    return run


def evaluate_retriever(
    dataset: Dataset,
    retriever: Retriever,
    metrics: tuple[str, ...] = DEFAULT_METRICS,
    depth: int = 1000,
    doc_of: Mapping[str, str] | None = None,
    filters: Mapping[str, FilterLike] | None = None,
) -> RetrievalResult:
    """Score ``retriever`` on the judged queries of ``dataset``'s split (see ``eval.metrics``)."""
    run = run_queries(retriever, dataset.judged_queries, depth, doc_of, filters)
    per_query = evaluate(dataset.qrels, run, metrics)
    return RetrievalResult(retriever.config(), mean_scores(per_query, list(metrics)), per_query, run)
