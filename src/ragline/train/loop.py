"""The training run both trainers share (``reranker.py``, ``embedder.py``): steps, dev checks, checkpoints, card.

A run is seeded (the data order comes from the seed, each step's sampling from ``rng_for(seed, step)``),
keeps the best dev step in ``NAME.partial/best``, writes a checkpoint after every dev check so that a run
with the same settings resumes at that step, stops after ``patience`` checks without a dev gain, and
finally moves the best step to ``$RAGLINE_CACHE/models/NAME`` with its ``card.json``. What differs between
the trainers (the model, its loss, its dev figure, how it is saved) is passed in as functions.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ragline.eval.datasets import Dataset
from ragline.train.data import commit, load_checkpoint, save_checkpoint
from ragline.train.models import CARD_FILE, trained_path

Log = Callable[[str], None]


def training_data(
    dataset_path: str | Path, settings: Any, embedder: str | None, log: Log
) -> tuple[Dataset, list[str], list[str], Any, Any]:
    """The dataset's split, its train and dev query ids, the corpus indexed (with ``embedder``'s vectors, cached;
    ``None``: BM25 only) and the first stage that mines negatives (``settings.negatives_from``).

    Torch's thread count is set first: the build embeds with it, and training keeps it.
    """
    import torch

    from ragline.eval.datasets import load_beir
    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index
    from ragline.retrieve.registry import build_retriever
    from ragline.train.data import train_dev_split

    torch.set_num_threads(settings.threads)
    dataset = load_beir(dataset_path, settings.split)
    train_ids, dev_ids = train_dev_split(dataset, settings.dev_fraction, settings.seed, settings.max_queries)
    index = build_index(dataset.corpus, IngestConfig(), IndexSettings(embedder=embedder))
    first = build_retriever(settings.negatives_from, index)
    log(f"{dataset.name}: {len(train_ids)} train queries, {len(dev_ids)} dev queries (from {settings.split})")
    return dataset, train_ids, dev_ids, index, first


class TrainingRun:
    """One run of ``settings`` (a frozen dataclass with ``epochs``, ``max_steps``, ``learning_rate``,
    ``warmup``, ``eval_every``, ``patience``, ``seed`` and ``key()``) training ``model`` as ``trained:NAME``."""

    def __init__(
        self, kind: str, name: str, settings: Any, model: Any, log: Log, started: float, figure: str = "ndcg@10"
    ) -> None:
        self.kind, self.name, self.settings, self.model = kind, name, settings, model
        self.figure = figure  # the dev figure's name in the history and the log (a reader's is f1)
        self.log, self.started = log, started
        self.folder = trained_path(name)
        self.partial = self.folder.with_name(self.folder.name + ".partial")
        self.state: dict[str, Any] = {"step": 0, "losses": [], "dev": [], "best": None, "best_step": 0, "stale": 0}
        self.resumed_seconds = 0.0

    def plan(self, n_examples: int, per_step: int) -> list[int]:
        """The optimizer, the warm-up schedule and the step count; returns the seeded example order."""
        import torch
        from transformers import get_linear_schedule_with_warmup

        s = self.settings
        self.total = math.ceil(n_examples / per_step) * s.epochs
        if s.max_steps is not None:
            self.total = min(self.total, s.max_steps)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=s.learning_rate)
        self.schedule = get_linear_schedule_with_warmup(self.optimizer, int(s.warmup * self.total), self.total)
        rng = random.Random(s.seed)
        return [i for _ in range(s.epochs) for i in rng.sample(range(n_examples), n_examples)]

    def resume(self) -> None:
        """Load the checkpoint a stopped run with the same settings left, if any."""
        saved = load_checkpoint(self.partial, self.settings.key(), self.model, self.optimizer, self.schedule)
        if saved is not None:
            self.state = saved
            self.resumed_seconds = float(saved.get("seconds_before", 0.0))
            self.log(f"resuming from step {saved['step']} ({self.partial})")

    @property
    def fresh(self) -> bool:
        """No dev figure yet: the untrained model is to be scored (and saved as the best so far)."""
        return self.state["best"] is None

    def begin(self, untrained: float, save_best: Callable[[Path], None], **figures: float) -> None:
        self.state.update(best=untrained, untrained=untrained, **figures)
        self.state["dev"].append({"step": 0, self.figure: untrained})
        save_best(self.partial / "best")

    def seconds(self) -> float:
        return time.perf_counter() - self.started + self.resumed_seconds

    def train(
        self,
        step_loss: Callable[[int], Any],
        dev: Callable[[], float],
        save_best: Callable[[Path], None],
        progress: bool,
    ) -> None:
        """Run the remaining steps: ``step_loss(step)`` is that step's loss, ``dev()`` the dev figure."""
        import torch

        from ragline.progress import track

        s, state = self.settings, self.state
        steps = range(state["step"], self.total)
        for step in track(steps, f"training {self.kind} {self.name}", total=len(steps), shown=progress):
            self.model.train()
            loss = step_loss(step)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.schedule.step()
            self.optimizer.zero_grad()
            state["losses"].append(round(loss.item(), 6))
            state["step"] = step + 1
            if state["step"] % s.eval_every == 0 or state["step"] == self.total:
                figure = dev()
                state["dev"].append({"step": state["step"], self.figure: figure})
                if figure > state["best"]:
                    state.update(best=figure, best_step=state["step"], stale=0)
                    save_best(self.partial / "best")
                else:
                    state["stale"] += 1
                state["seconds_before"] = self.seconds()
                save_checkpoint(self.partial, s.key(), state, self.model, self.optimizer, self.schedule)
                self.log(  # after the checkpoint: a run stopped from here on resumes at this step
                    f"step {state['step']}/{self.total}: loss {np.mean(state['losses'][-s.eval_every :]):.4f}, "
                    f"dev {self.figure} {figure:.4f}"
                )
                if state["stale"] >= s.patience:
                    self.log(f"no dev gain in {s.patience} evaluations: stopping at step {state['step']}")
                    break

    def publish(
        self,
        dataset: Dataset,
        counts: dict[str, int],
        metric: str,
        dev_figures: dict[str, Any] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Move the best step to the model folder with its card (data, steps, loss, dev figures, commit)."""
        s, state = self.settings, self.state
        card = {
            "kind": self.kind,
            "name": self.name,
            "id": f"{self.name}@{s.key()}",
            "base": s.base,
            "dataset": dataset.name,
            "dataset_path": str(dataset.path),
            "dataset_hash": dataset.hash,
            "split": s.split,
            **counts,
            **fields,
            "steps": state["step"],
            "best_step": state["best_step"],
            "loss_first_last": [state["losses"][:10], state["losses"][-10:]],
            "loss_mean_last_eval": float(np.mean(state["losses"][-s.eval_every :])) if state["losses"] else None,
            "dev": {
                "metric": metric,
                **(dev_figures or {}),
                "untrained": state.get("untrained"),
                "best": state["best"],
                "history": state["dev"],
            },
            "settings": asdict(s),
            "commit": commit(),
            "seconds": round(self.seconds(), 1),
        }
        if self.folder.exists():
            shutil.rmtree(self.folder)
        (self.partial / "best").rename(self.folder)
        (self.folder / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        shutil.rmtree(self.partial, ignore_errors=True)
        return card
