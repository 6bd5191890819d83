"""Training data for the second stage: a dataset's train queries, a dev slice cut from them, and hard
negatives mined by a first-stage retriever.

A hard negative is a document the first stage ranks high for a query that the qrels do not judge relevant:
the mistakes a reranker exists to fix (Karpukhin et al., "Dense Passage Retrieval", 2020; Qu et al.,
"RocketQA", 2021). Every judged positive of the query is excluded, whatever its grade, so a known positive
is never taught as a negative. Unjudged documents may still be relevant (false negatives); sampling among
the top ``depth`` rather than always taking the very top few lowers that risk.

The dev slice is drawn from the train queries with the seed, so the test split is never seen while
training or choosing when to stop.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from ragline.errors import ConfigError
from ragline.eval.datasets import Dataset
from ragline.retrieve.base import Retriever


@dataclass(frozen=True, slots=True)
class Example:
    """One training query: its text, its judged positives and the negatives mined for it."""

    query_id: str
    query: str
    positives: tuple[str, ...]
    negatives: tuple[str, ...]


def split_dev(query_ids: list[str], dev_fraction: float, seed: int, min_dev: int = 1) -> tuple[list[str], list[str]]:
    """``(train ids, dev ids)``: a seeded random ``dev_fraction`` of ``query_ids`` (at least ``min_dev``)."""
    if not 0.0 < dev_fraction < 1.0:
        raise ConfigError(f"dev fraction must be between 0 and 1 (e.g. 0.1), got {dev_fraction}")
    ids = sorted(query_ids)
    if len(ids) < 2:
        raise ConfigError(f"training needs at least 2 judged queries (one for the dev slice), got {len(ids)}")
    random.Random(seed).shuffle(ids)
    n_dev = min(max(min_dev, round(len(ids) * dev_fraction)), len(ids) - 1)
    return sorted(ids[n_dev:]), sorted(ids[:n_dev])


def train_dev_split(
    dataset: Dataset, dev_fraction: float, seed: int, max_queries: int | None = None
) -> tuple[list[str], list[str]]:
    """The train and dev query ids of a training run: judged queries with a positive, optionally capped."""
    judged = [q for q in sorted(dataset.judged_queries) if any(g > 0 for g in dataset.qrels[q].values())]
    if max_queries is not None:
        judged = sorted(random.Random(seed).sample(judged, min(max_queries, len(judged))))
    return split_dev(judged, dev_fraction, seed)


def positives_of(judgments: Mapping[str, int]) -> tuple[str, ...]:
    return tuple(sorted(doc_id for doc_id, grade in judgments.items() if grade > 0))


def mine_examples(
    dataset: Dataset,
    retriever: Retriever,
    query_ids: list[str],
    n_negatives: int,
    depth: int,
    seed: int,
) -> list[Example]:
    """An ``Example`` per query with a positive: ``n_negatives`` sampled from the first stage's top ``depth``."""
    rng = random.Random(seed)
    examples = []
    for query_id in query_ids:
        judgments = dataset.qrels.get(query_id, {})
        positives = positives_of(judgments)
        if not positives:
            continue
        judged = set(judgments)  # every judged document, any grade: never a negative
        ranked = [doc_id for doc_id, _ in retriever.rank(dataset.queries[query_id], depth) if doc_id not in judged]
        negatives = ranked if len(ranked) <= n_negatives else rng.sample(ranked, n_negatives)
        if negatives:
            examples.append(Example(query_id, dataset.queries[query_id], positives, tuple(negatives)))
    return examples


def candidate_lists(retriever: Retriever, queries: Mapping[str, str], depth: int) -> dict[str, list[str]]:
    """The first stage's top ``depth`` ids per query: what a reranker is measured on."""
    return {query_id: [doc_id for doc_id, _ in retriever.rank(text, depth)] for query_id, text in queries.items()}
