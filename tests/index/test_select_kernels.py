"""The compiled top-k selections agree with the numpy selection on scores full of ties."""

from __future__ import annotations

import numpy as np
import pytest

from ragline.index import kernels
from ragline.index.sparse import select_numpy
from ragline.index.stats import NO_MASK


def _scores(rng: np.random.Generator, n: int, touched: float, levels: int) -> np.ndarray:
    """Scores with few distinct values (many ties), zero where a row was not reached."""
    scores = np.zeros(n, dtype=np.float32)
    rows = rng.random(n) < touched
    scores[rows] = rng.integers(1, levels + 1, size=int(rows.sum())).astype(np.float32) / 7
    return scores


@pytest.mark.parametrize("n", [1, 5, kernels.ROW_BLOCK - 1, kernels.ROW_BLOCK, 3 * kernels.ROW_BLOCK + 1, 700])
@pytest.mark.parametrize("k", [1, 3, 10, 40])
def test_select_from_rows_is_the_numpy_selection(n: int, k: int) -> None:
    rng = np.random.default_rng(n * 100 + k)
    for trial in range(30):
        scores = _scores(rng, n, touched=rng.choice([0.0, 0.02, 0.3, 1.0]), levels=int(rng.choice([1, 3, 50])))
        deleted = rng.random(n) < 0.2 if trial % 3 == 1 else NO_MASK
        allowed = rng.random(n) < 0.5 if trial % 3 == 2 else NO_MASK
        expected_rows, expected_values = select_numpy(scores.copy(), deleted, allowed, k)
        buffer = scores.copy()
        rows, values = kernels.select_from_rows(buffer, deleted, allowed, k)
        assert rows.tolist() == expected_rows.tolist()
        assert values.tolist() == expected_values.tolist()
        assert not buffer.any()  # reset for the next query


def test_the_kth_largest_block_maximum_counts_repeats() -> None:
    assert kernels._kth_largest(np.array([5, 1, 5, 3, 5], dtype=np.int32), 3) == 5
    assert kernels._kth_largest(np.array([5, 1, 5, 3, 5], dtype=np.int32), 4) == 3
    assert kernels._kth_largest(np.array([0, 0, 2], dtype=np.int32), 2) == 0


@pytest.mark.parametrize("field_weight", [1.0, 0.7, 2.5])
def test_compiled_accumulation_is_the_numpy_accumulation_bit_for_bit(field_weight: float) -> None:
    from ragline.index.sparse import accumulate_numpy

    rng = np.random.default_rng(int(field_weight * 10))
    n_rows, n_terms = 300, 40
    per_term = [np.sort(rng.choice(n_rows, size=rng.integers(1, n_rows), replace=False)) for _ in range(n_terms)]
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum([len(rows) for rows in per_term], out=indptr[1:])
    docs = np.concatenate(per_term).astype(np.int32)
    # weights over many magnitudes, so that sums round
    weights = (rng.random(docs.size) * 10.0 ** rng.integers(-3, 4, size=docs.size)).astype(np.float32)
    g2l = np.arange(n_terms, dtype=np.int32)
    for _ in range(20):
        gids = rng.integers(0, n_terms, size=rng.integers(1, 30)).astype(np.int64)  # repeats too
        compiled, numpy_scores = np.zeros(n_rows, np.float32), np.zeros(n_rows, np.float32)
        kernels.accumulate(indptr, docs, weights, g2l, gids, field_weight, compiled)
        accumulate_numpy(indptr, docs, weights, g2l, gids, field_weight, numpy_scores)
        assert np.array_equal(compiled.view(np.int32), numpy_scores.view(np.int32))
