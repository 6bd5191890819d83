"""Brute-force inner-product top k, in blocks that bound memory: the exact arm of a vector search.

A filtered search that allows few rows, or a small index, is answered exactly (``VectorIndex`` decides
when).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# Exact search scores queries against at most this many floats at once, bounding its memory (64 MiB).
EXACT_BLOCK_FLOATS = 1 << 24


def top_k(scores: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Best ``k`` per query of (nq, m) ``scores`` and their ``rows``: score descending, then row ascending.

    Padded with score -inf and row -1 up to ``k``. Among equal scores at the k-th place, which rows make
    the cut is arbitrary (argpartition).
    """
    if scores.shape[1] > k:
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        scores, rows = np.take_along_axis(scores, part, 1), np.take_along_axis(rows, part, 1)
    by_row = np.argsort(rows, axis=1, kind="stable")
    scores, rows = np.take_along_axis(scores, by_row, 1), np.take_along_axis(rows, by_row, 1)
    by_score = np.argsort(-scores, axis=1, kind="stable")
    scores, rows = np.take_along_axis(scores, by_score, 1), np.take_along_axis(rows, by_score, 1)
    missing = k - scores.shape[1]
    if missing > 0:
        scores = np.pad(scores, ((0, 0), (0, missing)), constant_values=-np.inf)
        rows = np.pad(rows, ((0, 0), (0, missing)), constant_values=-1)
    return scores, rows


def exact_top_k(
    q: np.ndarray, k: int, rows: np.ndarray, vectors_of: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` of ``rows`` for each query of ``q`` (nq, d); ``vectors_of(rows)`` gives their vectors."""
    block = max(1024, EXACT_BLOCK_FLOATS // (len(q) + q.shape[1]))  # scores and gathered vectors
    best = top_k(np.empty((len(q), 0), np.float32), np.empty((len(q), 0), np.int64), k)
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        scores = q @ vectors_of(part).T
        merged_scores = np.concatenate([best[0], scores], axis=1)
        merged_rows = np.concatenate([best[1], np.broadcast_to(part, scores.shape)], axis=1)
        best = top_k(merged_scores, merged_rows, k)
    return best
