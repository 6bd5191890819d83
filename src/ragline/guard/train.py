"""Training the injection classifier on the injection set (``benchmarks/injection/passages.jsonl``).

Units are segments (``ragline.guard.detector.segments``): a hostile passage's segments that overlap its
``injected`` span are positives; its other segments, every segment of a benign passage and of the
relevant passages are negatives. Logistic regression (L2, full-batch gradient descent in numpy) is fit on
the **train** split; the threshold is the one that flags the most dev hostile passages while flagging at
most ``max_benign_rate`` of dev benign passages (the detector's patterns included, as at run time). The
test split is not read here.

    python -m ragline.guard.train benchmarks/injection/passages.jsonl

writes ``injection_model.npz`` and its card ``injection_model.json`` (SHA-256, threshold, figures) beside
this module. They are checked in: 0.5 MB, deterministic, and a reader must not retrain at first use.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import InputError
from ragline.guard.detector import (
    DIMENSIONS,
    InjectionDetector,
    InjectionModel,
    feature_counts,
    normalize,
    segments,
)


def read_set(path: Path) -> list[dict[str, Any]]:
    """The records of an injection set (JSONL); a malformed line names its number."""
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(
                f"{path}:{number}: not JSON ({error}); regenerate it with benchmarks/injection/generate.py"
            ) from error
        for key in ("label", "split", "text", "style"):
            if key not in record:
                raise InputError(f"{path}:{number}: missing field {key!r}")
        records.append(record)
    return records


def labelled_segments(record: dict[str, Any]) -> list[tuple[str, int]]:
    """(segment text, 1 if it carries the injection else 0) of one record."""
    text = record["text"]
    span = None
    if record["label"] == "hostile" and (at := text.find(record["injected"])) >= 0:
        span = (at, at + len(record["injected"]))
    out = []
    for segment in segments(text):
        inside = span is not None and segment.start < span[1] and span[0] < segment.end
        out.append((segment.text, int(inside)))
    return out


def fit_logistic(
    rows: Sequence[dict[int, float]], labels: np.ndarray, l2: float = 1e-5, steps: int = 3000, rate: float = 8.0
) -> tuple[np.ndarray, float]:
    """L2-regularized logistic regression on sparse rows, classes weighted to balance; (weights, bias)."""
    n = len(rows)
    lengths = np.array([len(r) for r in rows])
    row_ids = np.repeat(np.arange(n), lengths)
    cols = np.fromiter((k for r in rows for k in r), dtype=np.int64, count=int(lengths.sum()))
    vals = np.fromiter((v for r in rows for v in r.values()), dtype=np.float64, count=int(lengths.sum()))
    positives = max(int(labels.sum()), 1)
    sample_weight = np.where(labels == 1, n / (2 * positives), n / (2 * max(n - positives, 1)))
    weights, bias = np.zeros(DIMENSIONS), 0.0
    for _ in range(steps):
        logits = np.bincount(row_ids, weights=weights[cols] * vals, minlength=n) + bias
        error = (1.0 / (1.0 + np.exp(-logits)) - labels) * sample_weight / n
        gradient = np.bincount(cols, weights=error[row_ids] * vals, minlength=DIMENSIONS) + l2 * weights
        weights -= rate * gradient
        bias -= rate * float(error.sum())
    return weights, bias


def choose_threshold(detector: InjectionDetector, dev: Sequence[dict[str, Any]], max_benign_rate: float) -> float:
    """The lowest classifier threshold whose dev benign flag rate is at most ``max_benign_rate``."""
    benign = [r for r in dev if r["label"] == "benign"]
    assert detector.model is not None
    best_classifier = {
        id(r): max((detector.model.probability(normalize(s.text)) for s in segments(r["text"])), default=0.0)
        for r in dev
    }
    best = 0.99
    for threshold in np.round(np.arange(0.99, 0.04, -0.01), 2):
        flagged = sum(best_classifier[id(r)] >= threshold for r in benign)
        if flagged > max_benign_rate * len(benign):
            break
        best = float(threshold)
    return best


def passage_rates(detector: InjectionDetector, records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Share of hostile passages flagged (recall) and of benign passages flagged (false positives)."""
    out = {}
    for label in ("hostile", "benign"):
        chosen = [r for r in records if r["label"] == label]
        flagged = sum(detector.inspect(r["text"]).flagged for r in chosen)
        out[f"{label}_flagged"] = round(flagged / max(len(chosen), 1), 4)
    return out


def train(records: Sequence[dict[str, Any]], max_benign_rate: float = 0.02) -> tuple[InjectionModel, dict[str, Any]]:
    """The classifier fit on the train split, its threshold set on dev; figures on train and dev."""
    train_set = [r for r in records if r["split"] == "train"]
    dev = [r for r in records if r["split"] == "dev"]
    units = [unit for r in train_set for unit in labelled_segments(r)]
    units += [(r["relevant"], 0) for r in {r["relevant"]: r for r in train_set}.values()]
    rows = [feature_counts(normalize(text)) for text, _ in units]
    labels = np.array([label for _, label in units], dtype=np.float64)
    weights, bias = fit_logistic(rows, labels)
    model = InjectionModel(weights, bias, 0.5)
    threshold = choose_threshold(InjectionDetector(model, 0.5), dev, max_benign_rate)
    model = InjectionModel(weights, bias, threshold)
    facts = {
        "train_segments": len(units),
        "train_positive_segments": int(labels.sum()),
        "train_styles": sorted({r["style"] for r in train_set}),
        "dev_styles": sorted({r["style"] for r in dev}),
        "max_benign_rate_dev": max_benign_rate,
    }
    for name, chosen in (("train", train_set), ("dev", dev)):
        facts[name] = passage_rates(InjectionDetector(model), chosen)
    return model, facts


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="train the injection classifier on an injection set's train split")
    parser.add_argument("passages", type=Path)
    parser.add_argument("--max-benign-rate", type=float, default=0.02, help="on dev, when choosing the threshold")
    args = parser.parse_args(argv)
    model, facts = train(read_set(args.passages), args.max_benign_rate)
    facts["sha256"] = model.save(**facts)
    print(json.dumps({"threshold": model.threshold, **facts}))


if __name__ == "__main__":
    main()
