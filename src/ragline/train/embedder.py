"""``ragline train embedder``: fine-tune the packaged MiniLM bi-encoder on a dataset's train split.

Each train query is paired with one of its judged positives and one hard negative mined by a first stage
(``data.py``; judged documents excluded), and the model learns with sentence-transformers'
``MultipleNegativesRankingLoss``: a softmax over the query's similarity to every passage of the batch,
the other queries' positives and negatives serving as in-batch negatives (Henderson et al., "Efficient
Natural Language Response Suggestion for Smart Reply", 2017; Karpukhin et al., "Dense Passage Retrieval",
2020, with one BM25 hard negative per question).

The dev slice (cut from the train queries, the same rule and seed as ``ragline train reranker``) is scored
every ``eval_every`` steps as nDCG@10 of dense retrieval over a fixed **dev pool**: every dev query's judged
documents plus the top ``dev_pool`` of BM25 and of the base model for each dev query, all pooled into one
small corpus that every dev query searches. Searching the full corpus would re-embed it at every evaluation
(~15-25 minutes for SciFact's 5,183 abstracts on 2 cores); the pool keeps the distractors that matter (what
the lexical and the untuned dense first stage rank high) at a small fraction of that cost. Its figures are
higher than full-corpus figures (fewer distractors) and only compare steps and models with each other.
The best step is kept; training stops after ``patience`` evaluations without a gain.

Reproducible (same seed, data and thread count -> same dev figures) and resumable from ``NAME.partial``
as the reranker's training is. The result is a sentence-transformers folder under
``$RAGLINE_CACHE/models/NAME`` with ``card.json``; every embedder setting names it as ``trained:NAME``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, ModelError
from ragline.eval.datasets import Dataset
from ragline.eval.metrics import evaluate, mean_scores
from ragline.train.data import (
    Example,
    candidate_lists,
    mine_examples,
    rng_for,
    seed_all,
)
from ragline.train.loop import TrainingRun, training_data
from ragline.train.models import resolve_model, settings_key

Log = Callable[[str], None]


@dataclass(frozen=True)
class EmbedderTraining:
    """Everything that determines a trained embedder (stamped in its card; a resume must match it)."""

    base: str = "minilm"
    split: str = "train"
    negatives_from: str = "hybrid"  # the first stage that mines the hard negatives
    mine_depth: int = 20  # the hard negative is sampled from the first stage's top `mine_depth`
    dev_fraction: float = 0.1
    dev_pool: int = 5  # per dev query: this many of BM25's and of the base model's top, plus its judged docs
    epochs: int = 1
    max_steps: int | None = None
    batch_size: int = 16
    learning_rate: float = 3e-5
    warmup: float = 0.1
    max_seq_length: int = 256
    scale: float = 20.0  # MultipleNegativesRankingLoss: cosine similarities times this, before the softmax
    eval_every: int = 16
    patience: int = 3
    seed: int = 0
    threads: int = 2
    max_queries: int | None = None  # cap on train queries (a small, quick run)

    def key(self) -> str:
        return settings_key(asdict(self))


@dataclass(frozen=True)
class DevPool:
    """The dev queries and the fixed sub-corpus they search (see the module's docstring)."""

    queries: dict[str, str]
    doc_ids: list[str]
    passages: list[str]
    qrels: dict[str, dict[str, int]]


def dev_pool(dataset: Dataset, dev_ids: list[str], retrievers: list[Any], depth: int) -> DevPool:
    """Every dev query's judged documents plus each retriever's top ``depth`` for it, as one sorted pool."""
    from ragline.index.segment import FIELD_TEXT

    queries = {q: dataset.queries[q] for q in dev_ids}
    pooled = {doc_id for q in dev_ids for doc_id in dataset.qrels[q]}
    for retriever in retrievers:
        pooled.update(doc_id for ids in candidate_lists(retriever, queries, depth).values() for doc_id in ids)
    by_id = {doc.id: doc for doc in dataset.corpus}
    doc_ids = sorted(doc_id for doc_id in pooled if doc_id in by_id)  # a qrel naming no document is skipped
    passages = [FIELD_TEXT["body"](by_id[doc_id]) for doc_id in doc_ids]
    return DevPool(queries, doc_ids, passages, {q: dataset.qrels[q] for q in dev_ids})


def dev_ndcg(model: Any, pool: DevPool, batch_size: int = 16) -> float:
    """Mean nDCG@10 of the dev queries searching the pool with ``model``'s normalized vectors."""
    import torch

    model.eval()
    with torch.inference_mode():
        docs = model.encode(pool.passages, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
        queries = model.encode(
            list(pool.queries.values()), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
    scores = np.asarray(queries) @ np.asarray(docs).T
    run = {}
    for row, query_id in zip(scores, pool.queries):
        top = np.argsort(-row, kind="stable")[:10]
        run[query_id] = {pool.doc_ids[i]: float(row[i]) for i in top}
    return float(mean_scores(evaluate(pool.qrels, run, ["ndcg@10"]), ["ndcg@10"])["ndcg@10"])


def _load_base(settings: EmbedderTraining) -> Any:
    from sentence_transformers import SentenceTransformer

    base = resolve_model(settings.base, "embedder")
    try:
        model = SentenceTransformer(base, device="cpu")
    except Exception as error:  # a missing config, a hub refusal: say which model and where
        raise ModelError(f"base model {settings.base!r} ({base}) could not be loaded: {error}") from error
    model.max_seq_length = settings.max_seq_length
    return model


def train_embedder(
    dataset_path: str | Path,
    name: str,
    settings: EmbedderTraining = EmbedderTraining(),
    log: Log = lambda message: None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train an embedder on ``dataset_path``'s ``settings.split`` and save it as ``trained:NAME``; its card."""
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from ragline.index.segment import FIELD_TEXT
    from ragline.retrieve.registry import build_retriever

    started = time.perf_counter()
    # The base model's vectors serve the mining (a hybrid first stage) and the dev pool; they are cached.
    dataset, train_ids, dev_ids, index, first = training_data(dataset_path, settings, settings.base, log)
    text_of = {doc.id: FIELD_TEXT["body"](doc) for doc in dataset.corpus}
    mined = mine_examples(dataset, first, train_ids, 1, settings.mine_depth, settings.seed)
    # A qrel may name a document the corpus lacks: such a positive cannot be embedded, so it is left out.
    examples = [
        Example(e.query_id, e.query, tuple(p for p in e.positives if p in text_of), e.negatives)
        for e in mined
        if any(p in text_of for p in e.positives)
    ]
    if not examples:
        raise ConfigError(f"{dataset.path}: no train query has a positive and a mined negative; nothing to learn")
    pool = dev_pool(
        dataset, dev_ids, [build_retriever("bm25", index), build_retriever("dense", index)], settings.dev_pool
    )
    log(f"dev pool: {len(pool.doc_ids)} documents searched by {len(pool.queries)} dev queries")

    seed_all(settings.seed)
    model = _load_base(settings)
    loss_of = MultipleNegativesRankingLoss(model, scale=settings.scale)
    run = TrainingRun("embedder", name, settings, model, log, started)
    order = run.plan(len(examples), settings.batch_size)
    run.resume()
    if run.fresh:
        untrained = dev_ndcg(model, pool)
        log(f"dev nDCG@10 over the pool: untrained {untrained:.4f}")
        run.begin(untrained, lambda best: model.save(str(best)))

    def step_loss(step: int) -> Any:
        picks = range(min(settings.batch_size, len(examples)))
        batch = [examples[order[(step * settings.batch_size + j) % len(order)]] for j in picks]
        return _triplet_loss(model, loss_of, batch, text_of, rng_for(settings.seed, step))

    run.train(step_loss, lambda: dev_ndcg(model, pool), lambda best: model.save(str(best)), progress)
    return run.publish(
        dataset,
        {"train_queries": len(train_ids), "train_examples": len(examples), "dev_queries": len(dev_ids)},
        f"ndcg@10 of dense retrieval over a pool of {len(pool.doc_ids)} documents "
        f"(judged + bm25 and base top {settings.dev_pool} per dev query)",
        dim=model.get_embedding_dimension(),
        max_seq_length=settings.max_seq_length,
    )


def _triplet_loss(model: Any, loss_of: Any, batch: list[Example], text_of: dict[str, str], rng: random.Random) -> Any:
    """The loss of one batch of (query, a positive, its hard negative) triplets, drawn with ``rng``."""
    queries = [example.query for example in batch]
    positives = [text_of[rng.choice(example.positives)] for example in batch]
    negatives = [text_of[rng.choice(example.negatives)] for example in batch]
    features = [model.preprocess(texts) for texts in (queries, positives, negatives)]
    return loss_of(features, None)
