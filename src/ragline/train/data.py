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

import json
import random
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def rng_for(seed: int, step: int) -> random.Random:
    """The sampler of one step: what it draws depends on the seed and the step only (so a resume repeats it)."""
    return random.Random(seed * 1_000_003 + step)


def seed_all(seed: int) -> None:
    """Seed Python's, numpy's and torch's generators (data order, dropout, new weights)."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def commit() -> str | None:
    """The git commit of this checkout, for a model's card (None outside a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(Path(__file__).parent), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def save_checkpoint(partial: Path, key: str, state: dict[str, Any], model: Any, optimizer: Any, schedule: Any) -> None:
    """Everything a run needs to resume at ``state["step"]``: weights, optimizer, schedule, torch's RNG."""
    import torch

    partial.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), partial / "model.pt")
    torch.save(optimizer.state_dict(), partial / "optimizer.pt")
    torch.save(schedule.state_dict(), partial / "schedule.pt")
    torch.save(torch.get_rng_state(), partial / "rng.pt")
    (partial / "state.json").write_text(json.dumps({"key": key, "state": state}), encoding="utf-8")


def load_checkpoint(partial: Path, key: str, model: Any, optimizer: Any, schedule: Any) -> dict[str, Any] | None:
    """The saved state of a run with settings ``key`` (weights etc. loaded into the objects); None if none.

    A checkpoint of other settings is removed: resuming it would mix two runs.
    """
    import shutil

    import torch

    if not (partial / "state.json").is_file():
        return None
    saved = json.loads((partial / "state.json").read_text())
    if saved.get("key") != key:
        shutil.rmtree(partial)
        return None
    model.load_state_dict(torch.load(partial / "model.pt", weights_only=True))
    optimizer.load_state_dict(torch.load(partial / "optimizer.pt", weights_only=True))
    schedule.load_state_dict(torch.load(partial / "schedule.pt", weights_only=True))
    torch.set_rng_state(torch.load(partial / "rng.pt", weights_only=True))
    return saved["state"]
