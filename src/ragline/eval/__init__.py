"""Evaluation harness: ranking metrics, TREC/BEIR files, datasets and significance tests."""

from __future__ import annotations

from ragline.eval.datasets import Dataset, load_beir, load_dataset
from ragline.eval.metrics import (
    Qrels,
    Run,
    evaluate,
    evaluate_mean,
    mean_scores,
    parse_metric,
    rank_documents,
)
from ragline.eval.stats import bootstrap_ci, cohens_d_paired, compare, paired_t_test, randomization_test
from ragline.eval.trec import read_beir_qrels, read_qrels, read_run, write_beir_qrels, write_qrels, write_run

__all__ = [
    "Dataset",
    "Qrels",
    "Run",
    "bootstrap_ci",
    "cohens_d_paired",
    "compare",
    "evaluate",
    "evaluate_mean",
    "load_beir",
    "load_dataset",
    "mean_scores",
    "paired_t_test",
    "parse_metric",
    "randomization_test",
    "rank_documents",
    "read_beir_qrels",
    "read_qrels",
    "read_run",
    "write_beir_qrels",
    "write_qrels",
    "write_run",
]
