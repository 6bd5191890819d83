"""VectorIndex: exactness of flat, recall of the approximate kinds, filtered search, persistence, errors.

Small clustered data (3000 x 32, 30 clusters) and one OpenMP thread: OpenMP spin-waits badly on a busy
machine, and these sizes gain nothing from more threads.
"""

from __future__ import annotations

import logging
from pathlib import Path

import faiss
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.errors import ConfigError, IndexMismatchError
from ragline.index.vectors import VectorIndex, VectorIndexConfig

N, DIM, K = 3000, 32, 10
SPECS = {
    "flat": "flat:threads=1",
    "hnsw": "hnsw:threads=1",
    "ivf": "ivf:nlist=32,nprobe=8,threads=1",
    "ivfpq": "ivfpq:nlist=16,nprobe=8,pq_m=16,pq_bits=6,threads=1",
}


def _clustered(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(0).standard_normal((30, DIM))
    return (centers[rng.integers(0, 30, n)] + 0.35 * rng.standard_normal((n, DIM))).astype(np.float32)


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return _clustered(N, seed=1)


@pytest.fixture(scope="module")
def queries() -> np.ndarray:
    return _clustered(50, seed=2)


@pytest.fixture(scope="module")
def indexes(data: np.ndarray) -> dict[str, VectorIndex]:
    return {kind: VectorIndex.build(data, spec) for kind, spec in SPECS.items()}


def _brute_force(
    data: np.ndarray, queries: np.ndarray, k: int, mask: np.ndarray | None = None, cosine: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    if cosine:
        data = data / np.linalg.norm(data, axis=1, keepdims=True)
        queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    scores = queries.astype(np.float64) @ data.astype(np.float64).T
    if mask is not None:
        scores[:, ~mask] = -np.inf
    rows = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, rows, 1), rows


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth)]))


@pytest.mark.parametrize("metric", ["cosine", "ip"])
def test_flat_equals_brute_force(data: np.ndarray, queries: np.ndarray, metric: str) -> None:
    index = VectorIndex.build(data, VectorIndexConfig(kind="flat", metric=metric, threads=1))
    scores, rows = index.search(queries, K)
    expected_scores, expected_rows = _brute_force(data, queries, K, cosine=metric == "cosine")
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-4, atol=1e-4)
    assert scores.dtype == np.float32 and rows.dtype == np.int64


def test_hnsw_recall(indexes: dict[str, VectorIndex], data: np.ndarray, queries: np.ndarray) -> None:
    _, rows = indexes["hnsw"].search(queries, K)
    assert _recall(rows, _brute_force(data, queries, K)[1]) >= 0.95


def test_ivf_recall(indexes: dict[str, VectorIndex], data: np.ndarray, queries: np.ndarray) -> None:
    assert indexes["ivf"].stats["effective_kind"] == "ivf"
    _, rows = indexes["ivf"].search(queries, K)
    assert _recall(rows, _brute_force(data, queries, K)[1]) >= 0.9


def test_ivfpq_finds_near_duplicates(indexes: dict[str, VectorIndex], data: np.ndarray) -> None:
    # 12 bytes a vector cannot order the members of a dense cluster, but it must find a near duplicate
    # of a stored vector in its top 10 (1-recall@10, the usual PQ measure; Jégou et al. 2011).
    index = indexes["ivfpq"]
    assert index.stats | {"pq_m": 16, "pq_bits": 6, "nlist": 16} == index.stats
    rng = np.random.default_rng(5)
    targets = rng.integers(0, N, 200)
    _, rows = index.search(data[targets] + 0.05 * rng.standard_normal((200, DIM)), K)
    assert np.mean([t in r for t, r in zip(targets, rows)]) >= 0.9


def test_ivf_with_too_few_vectors_falls_back_to_flat(
    data: np.ndarray, queries: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ragline.index.vectors"):
        index = VectorIndex.build(data[:500], "ivf:threads=1")  # auto nlist 89 needs 39 * 89 vectors
    assert "falls back to exact flat search" in caplog.text
    assert index.stats["effective_kind"] == "flat" and index.stats["kind"] == "ivf"
    np.testing.assert_array_equal(index.search(queries, K)[1], _brute_force(data[:500], queries, K)[1])


@pytest.mark.parametrize("kind", list(SPECS))
def test_selective_mask_is_searched_exactly(
    indexes: dict[str, VectorIndex], data: np.ndarray, queries: np.ndarray, kind: str
) -> None:
    mask = np.random.default_rng(3).random(N) < 0.01  # under EXACT_SEARCH_BELOW
    _, rows = indexes[kind].search(queries, K, allowed=mask)
    if kind == "ivfpq":  # exact over what the index stores: the PQ-decoded (already normalized) vectors
        decoded = indexes[kind]._index.reconstruct_n(0, N)
        unit_queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
        _, expected = _brute_force(decoded, unit_queries, K, mask, cosine=False)
    else:
        _, expected = _brute_force(data, queries, K, mask)
    np.testing.assert_array_equal(rows, expected)


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_short_approximate_results_are_redone_exactly(data: np.ndarray, queries: np.ndarray, kind: str) -> None:
    # exact_search_below=0 forces the approximate search, which runs short at 1% selectivity.
    index = VectorIndex.build(data, SPECS[kind] + ",exact_search_below=0")
    mask = np.random.default_rng(6).random(N) < 0.01
    plain_rows = index._approximate(index._prepare(queries, "q"), K, index.allow(mask))[1]
    short = (plain_rows < 0).any(axis=1)
    assert short.any(), "the data no longer exercises the fallback"
    _, rows = index.search(queries, K, allowed=mask)
    assert (rows >= 0).all()
    np.testing.assert_array_equal(rows[short], _brute_force(data, queries[short], K, mask)[1])


@pytest.mark.parametrize("kind", list(SPECS))
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    selectivity=st.sampled_from([0.0, 0.001, 0.01, 0.03, 0.1, 0.5, 1.0]),
    k=st.integers(1, 30),
)
def test_filtered_search_respects_the_mask(
    indexes: dict[str, VectorIndex], queries: np.ndarray, kind: str, seed: int, selectivity: float, k: int
) -> None:
    mask = np.random.default_rng(seed).random(N) < selectivity
    scores, rows = indexes[kind].search(queries[:8], k, allowed=mask)
    expected_count = min(k, int(mask.sum()))
    for score_row, row in zip(scores, rows):
        found = row[row >= 0]
        assert len(found) == expected_count
        assert mask[found].all()
        assert len(set(found.tolist())) == len(found)
        assert (row[expected_count:] == -1).all() and np.isneginf(score_row[expected_count:]).all()
        assert (np.diff(score_row[:expected_count]) <= 1e-6).all()


@pytest.mark.parametrize("kind", list(SPECS))
def test_save_load_roundtrip(indexes: dict[str, VectorIndex], queries: np.ndarray, tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"{kind}.faiss"
    indexes[kind].save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary file left behind
    loaded = VectorIndex.load(path, SPECS[kind])
    assert len(loaded) == N and loaded.stats == indexes[kind].stats
    mask = np.random.default_rng(4).random(N) < 0.3
    for allowed in (None, mask):
        for before, after in zip(indexes[kind].search(queries, K, allowed), loaded.search(queries, K, allowed)):
            np.testing.assert_array_equal(before, after)


def test_load_rejects_another_kind(indexes: dict[str, VectorIndex], tmp_path: Path) -> None:
    path = tmp_path / "hnsw.faiss"
    indexes["hnsw"].save(path)
    with pytest.raises(IndexMismatchError, match="holds a hnsw vector index"):
        VectorIndex.load(path, "flat")


@pytest.mark.parametrize("kind", list(SPECS))
def test_empty_index_returns_nothing(queries: np.ndarray, tmp_path: Path, kind: str) -> None:
    index = VectorIndex(DIM, SPECS[kind])
    scores, rows = index.search(queries[:3], 5)
    assert rows.shape == (3, 5) and (rows == -1).all() and np.isneginf(scores).all()
    index.save(tmp_path / "empty.faiss")
    reloaded = VectorIndex.load(tmp_path / "empty.faiss", SPECS[kind])
    assert len(reloaded) == 0 and reloaded.stats["effective_kind"] == kind


def test_k_beyond_size_pads_and_1d_query_is_one_query(data: np.ndarray) -> None:
    index = VectorIndex.build(data[:4], "flat")
    scores, rows = index.search(data[0], 6)
    assert rows.shape == (1, 6) and rows[0, 0] == 0
    assert sorted(rows[0, :4].tolist()) == [0, 1, 2, 3] and (rows[0, 4:] == -1).all()
    assert index.search(data[:2], 0)[1].shape == (2, 0)


def test_add_appends_rows(data: np.ndarray) -> None:
    index = VectorIndex(DIM, "hnsw:threads=1")
    index.add(data[:100])
    index.add(data[100:200])
    assert len(index) == 200
    assert index.search(data[150], 1)[1][0, 0] == 150


def test_zero_vector_is_kept_and_scores_zero() -> None:
    index = VectorIndex.build(np.array([[0.0, 0.0], [1.0, 0.0]], dtype=np.float32), "flat")
    scores, rows = index.search(np.array([[0.0, 1.0]]), 2)
    np.testing.assert_allclose(scores, [[0.0, 0.0]])


def test_threads_setting_is_restored(data: np.ndarray) -> None:
    before = faiss.omp_get_max_threads()
    VectorIndex.build(data[:200], "flat:threads=1").search(data[:2], 3)
    assert faiss.omp_get_max_threads() == before


def test_dimension_mismatch_is_a_config_error(indexes: dict[str, VectorIndex]) -> None:
    with pytest.raises(ConfigError, match="dimension 16 but this index holds 32-dimensional"):
        indexes["flat"].search(np.zeros((2, 16), np.float32), K)
    with pytest.raises(ConfigError, match="dimension 16"):
        VectorIndex(DIM).add(np.zeros((2, 16), np.float32))


def test_bad_inputs_are_config_errors(indexes: dict[str, VectorIndex], queries: np.ndarray) -> None:
    with pytest.raises(ConfigError, match="boolean mask"):
        indexes["flat"].search(queries, K, allowed=np.arange(10))
    with pytest.raises(ConfigError, match="boolean mask"):
        indexes["flat"].search(queries, K, allowed=np.ones(N - 1, bool))
    with pytest.raises(ConfigError, match="NaN"):
        indexes["flat"].search(np.full((1, DIM), np.nan), K)
    with pytest.raises(ConfigError, match="k must be"):
        indexes["flat"].search(queries, -1)
    with pytest.raises(ConfigError, match="must divide the dimension"):
        VectorIndex(DIM, "ivfpq:pq_m=5")


def test_config_spec_parsing() -> None:
    config = VectorIndexConfig.parse("hnsw:m=16, ef_search=64, exact_search_below=0.05")
    assert (config.kind, config.m, config.ef_search, config.exact_search_below) == ("hnsw", 16, 64, 0.05)
    assert VectorIndexConfig.parse("ivf:nlist=auto").nlist is None
    assert VectorIndexConfig.parse("flat") == VectorIndexConfig()
    with pytest.raises(ConfigError, match="valid kinds: flat, hnsw, ivf, ivfpq"):
        VectorIndexConfig.parse("annoy")
    with pytest.raises(ConfigError, match="keys: metric, m, ef_construction"):
        VectorIndexConfig.parse("hnsw:M=16")
    with pytest.raises(ConfigError, match="not a number"):
        VectorIndexConfig.parse("hnsw:m=big")
    with pytest.raises(ConfigError, match="m must be an integer >= 2"):
        VectorIndexConfig(kind="hnsw", m=1)


# -- prepared filter masks ----------------------------------------------------------------------------


def _allowed_only(rows: np.ndarray, mask: np.ndarray) -> bool:
    return bool(mask[rows[rows >= 0]].all())


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_prepared_allowed_rows_search_like_the_mask(indexes: dict[str, VectorIndex], queries: np.ndarray, kind: str):
    index = indexes[kind]
    mask = np.random.default_rng(7).random(N) < 0.5
    fresh = index.search(queries, K, allowed=mask)
    prepared = index.allow(mask)
    first = index.search(queries, K, allowed=prepared)
    params = dict(prepared.params)
    second = index.search(queries, K, allowed=prepared)
    assert prepared.params == params and len(params) == 1  # the same search parameters, not built again
    for scores, rows in (first, second):
        np.testing.assert_array_equal(rows, fresh[1])
        np.testing.assert_array_equal(scores, fresh[0])


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_masks_are_read_when_searched_or_prepared(
    indexes: dict[str, VectorIndex], queries: np.ndarray, kind: str
) -> None:
    index = indexes[kind]
    mask = np.random.default_rng(8).random(N) < 0.5
    original = mask.copy()
    prepared = index.allow(mask)
    before = index.search(queries, K, allowed=mask)[1]
    assert _allowed_only(before, mask)
    mask[:] = ~mask  # in place: the same object, other rows
    after = index.search(queries, K, allowed=mask)[1]
    assert _allowed_only(after, mask), "a stale packed bitmap was used"
    assert _allowed_only(index.search(queries, K, allowed=prepared)[1], original)  # allow() copied the mask


def test_prepared_rows_follow_search_settings_and_index_size(data: np.ndarray, queries: np.ndarray) -> None:
    index = VectorIndex.build(data, SPECS["hnsw"])
    mask = np.random.default_rng(9).random(N) < 0.5
    prepared = index.allow(mask)
    index.search(queries, K, allowed=prepared)
    index.set_search(ef_search=16)
    rows = index.search(queries, K, allowed=prepared)[1]
    assert _allowed_only(rows, mask)
    assert sorted(p.efSearch for p in prepared.params.values()) == [16, 128]
    with pytest.raises(ConfigError, match="prepared for 3000 rows"):
        VectorIndex.build(data[:100], SPECS["flat"]).search(queries, K, allowed=prepared)
