"""Approximate nearest neighbours: ragline's VectorIndex against raw faiss, hnswlib and exact search.

Usage::

    .venv/bin/python benchmarks/ann.py                      # 1,000,000 synthetic vectors + SciFact
    .venv/bin/python benchmarks/ann.py --n 100000 --output pretty
    .venv/bin/python benchmarks/ann.py --quick              # 30,000 vectors, 200 queries, no models
    .venv/bin/python benchmarks/ann.py --skip ivfpq,hnswlib # leave parts out (see --help)

Output: one JSON line on stdout (``--output pretty`` indents it), also written to
``benchmarks/results/ann.json``, and the plot ``benchmarks/results/ann_recall_qps.png`` (recall@10 against
queries per second, log scale; solid lines one query at a time, dashed batched). Progress goes to stderr.

What is measured (k = 10, inner product over L2-normalized float32 vectors, i.e. cosine):

- Data (``synthetic``). Uniform random vectors have no real neighbours, so the ``--n`` base vectors and
  ``--queries`` queries (384-d) are drawn from a mixture of ``--centres`` clusters (default n / 500, within
  100-2000: about 500 vectors a cluster at any n, so that sizes compare) with unequal weights (log-normal).
  A point is its cluster's centre plus a spread inside a ``--rank``-dimensional subspace of its own (norm
  0.6-1.0 by cluster) plus isotropic noise (norm 0.5), then normalized: a low intrinsic dimension inside
  each cluster, as real embeddings have. Centres lean towards one of n/20 "parent" directions (related
  topics) and share one common direction (random pairs then have cosine ~0.1: 0.14 at 30,000, 0.07 at
  300,000 vectors; 0.13 for MiniLM's SciFact vectors). Calibrated once at 50,000 vectors against SciFact:
  HNSW (M=32) recall@10 at ef 16 is 0.94 here, 0.95 on SciFact's 5,183 real vectors; the parameters are
  fixed in the code, not tuned per run. Queries are fresh draws from the same mixture (none is in the base
  set). Generated in float32 chunks from ``--seed``: the same arguments give the same vectors.
  ``neighbour_cosines`` (mean cosine of the 1st and 10th true neighbour, and of random pairs) lets one
  compare this data with the SciFact vectors.
- Exact truth: faiss ``IndexFlatIP`` top 10. Its batched time is ``exact_qps_batch``; ``exact_qps_single``
  asks the first ``--exact-subset`` queries one at a time (a service's brute-force latency).
- ``hnsw`` sweep: ragline ``VectorIndex`` kind ``hnsw`` (M = 32, efConstruction = 200; build time and
  serialized size reported), for each ``ef_search`` in ``--ef``: recall@10 against the exact truth and QPS,
  one query at a time through ``VectorIndex.search`` (as ``Index.search_vector`` calls it) and batched (all
  queries in one call). ``faiss-hnsw`` is the same faiss index object searched directly
  (``index.hnsw.efSearch = ef; index.search(q, 10)``, queries already normalized): the difference is
  ragline's own per-call work. ``overhead_ratio`` = ragline time / faiss time (median over the passes of
  the per-pass ratio; the two run interleaved query by query, in alternating order, so that machine noise
  and cache warmth hit both alike) and
  ``overhead_us`` the difference per query in microseconds. ``same_results`` says whether both returned
  the very same rows. ef_search is changed between settings with ``VectorIndex.set_search``.
- ``hnswlib`` (if importable): ``space="ip"``, M = 32, ef_construction = 200, the same ef values; one query
  at a time with ``num_threads=1`` and batched with ``--threads``.
- ``ivf`` / ``ivfpq``: ragline kinds ``ivf`` and ``ivfpq`` (nlist ``--nlist``, default ragline's
  round(4 * sqrt(n)); ivfpq with ragline's default pq_m = dim / 4 sub-vectors of 8 bits, no re-ranking,
  so its recall against exact is capped by quantization), trained by ``VectorIndex.build`` on all vectors
  as ragline does (``--ivf-train-sample N`` trains on a random sample instead, to save time: then the
  build time is not ragline's), for each nprobe in ``--nprobe``; and the same faiss objects directly
  (``faiss-ivf``, ``faiss-ivfpq``).
- ``filtered``: for each selectivity in ``--selectivities`` (fraction of rows allowed; one random mask of
  exactly that many rows per selectivity, the same for all queries) the exact filtered top 10 is the
  truth. Raw faiss HNSW with an ``IDSelectorBitmap`` at each ef in ``--filter-ef``: ``short_fraction``
  (queries with fewer than 10 results) and recall@10; QPS one query at a time (bitmap packed once, outside
  the timing). ragline ``VectorIndex.search(q, 10, allowed=mask)`` on the same index in two modes:
  ``approx`` (``exact_search_below=0``: graph search with the selector, queries left short redone
  exactly; the mask is prepared once by ``VectorIndex.allow``, as ``Index.search_vector`` does per
  commit and as the faiss column packs its bitmap once) and ``exact`` (``exact_search_below=1``: brute
  force over the allowed rows, timed on the first ``--exact-subset`` queries). ``default`` repeats
  whichever of the two ragline's shipped ``EXACT_SEARCH_BELOW`` picks at that selectivity (at ragline's
  default ef_search, 128). ``threshold``
  summarizes: the selectivities at which exact beats approx (faster, or approx recall below
  ``--recall-target``), and the suggested ``exact_search_below`` (the smallest tested selectivity above all
  of those).
- ``scifact``: SciFact's 5,183 passages (``title + "\\n" + text``, as ragline's ``body`` field) and all
  1,109 queries, embedded by the default model (all-MiniLM-L6-v2) through ragline's embedding cache
  (``CachedEmbedder(load_embedder(...))``; cache at ``--cache`` or ragline's default), so a rerun computes
  nothing (``computed`` / ``cached`` say how many); or vectors from ``--vectors P.npy --query-vectors
  Q.npy`` (rows in corpus.jsonl / queries.jsonl order). The same hnsw / faiss-hnsw / hnswlib sweep (IVF
  would fall back to flat at this size: too few vectors per cell).
- ``embedding``: the default model without the cache: passages/s over ``--embed-passages`` SciFact
  passages and queries/s over all queries (batches of 32), and the median latency of one query embedded
  alone (``--embed-single`` of them), with ``--embed-threads`` torch threads (default ``--threads``).

Threads: every search runs with ``--threads`` threads (default 1, to compare with per-query service
latency): OMP/MKL/OPENBLAS thread variables are set before numpy is imported, faiss.omp_set_num_threads,
hnswlib ``num_threads``. Index builds use ``--build-threads`` (default: all cores), which changes build
time only. Memory: ``peak_rss_gib`` (the process's peak; ``synthetic.peak_rss_gib`` is the peak before
any model is loaded) and each index's serialized size. Each index is freed after its part; the peak is
the HNSW build: the base vectors, ragline's normalized copy of them and the index (vectors + graph, about
M * 2 * 4 bytes a vector more), about 3.3 times the 1.5 GB of vectors at n = 1M: some 5 GiB.
"""

from __future__ import annotations

import argparse
import os
import sys


def _early_threads(argv: list[str]) -> int:
    """``--threads`` before numpy is imported: BLAS and OpenMP read their variables once, at load."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--threads", type=int, default=1)
    known, _ = parser.parse_known_args(argv)
    return max(1, known.threads)


THREADS = _early_threads(sys.argv[1:])
THREAD_ENV = {var: str(THREADS) for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
os.environ.update(THREAD_ENV)

import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import faiss  # noqa: E402
import numpy as np  # noqa: E402

from common import bench_root, elapsed, peak_rss_gib, print_result, write_result  # noqa: E402
from common import log as log_line  # noqa: E402
from ragline.index.vectors import EXACT_SEARCH_BELOW, VectorIndex, VectorIndexConfig, omp_threads  # noqa: E402

try:
    import hnswlib  # noqa: E402
except ImportError:  # optional
    hnswlib = None

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
K = 10
DIM = 384
PARTS = ("hnswlib", "ivf", "ivfpq", "filtered", "scifact", "embed")


def log(message: str) -> None:
    log_line(message, memory=True)  # the runs here are sized by memory: every line says how much is held


# -- data ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Mixture:
    """Clusters: centres near "parent" topics, log-normal weights, a random ``rank``-dim spread per cluster."""

    centres: np.ndarray  # (C, d)
    weights: np.ndarray  # (C,)
    spread: np.ndarray  # (C,) norm of the in-subspace spread
    bases: np.ndarray  # (C, rank, d), rows of norm ~1
    noise: float = 0.5  # norm of the isotropic noise

    @classmethod
    def make(cls, n_centres: int, dim: int, rank: int, seed: int) -> Mixture:
        rng = np.random.default_rng([seed, 0])

        def unit(rows: int) -> np.ndarray:
            x = rng.standard_normal((rows, dim), dtype=np.float32)
            return x / np.linalg.norm(x, axis=1, keepdims=True)

        # Each centre leans (weight 0.7) towards one of n/20 parents, so clusters have near neighbours, and
        # all share one direction (weight 0.35), so random pairs have cosine ~0.1, as text embeddings do.
        parents = unit(max(1, n_centres // 20))[rng.integers(0, max(1, n_centres // 20), n_centres)]
        centres = 0.7 * parents + math.sqrt(1 - 0.7**2) * unit(n_centres)
        centres = centres / np.linalg.norm(centres, axis=1, keepdims=True) + 0.35 * unit(1)
        weights = rng.lognormal(0.0, 1.0, n_centres)
        spread = rng.uniform(0.6, 1.0, n_centres).astype(np.float32)
        bases = rng.standard_normal((n_centres, rank, dim), dtype=np.float32) / np.float32(math.sqrt(dim))
        return cls(centres.astype(np.float32), weights / weights.sum(), spread, bases)

    def sample(self, n: int, seed: int, chunk: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
        """(n, d) unit float32 vectors and their cluster labels, chunk by chunk (bounded temporaries)."""
        rng = np.random.default_rng([seed, 1])
        n_centres, rank, dim = self.bases.shape
        labels = rng.choice(n_centres, size=n, p=self.weights)
        out = np.empty((n, dim), dtype=np.float32)
        for start in range(0, n, chunk):
            lab = labels[start : start + chunk]
            order = np.argsort(lab, kind="stable")  # group rows by cluster: one matmul per cluster
            lab_sorted = lab[order]
            x = rng.standard_normal((len(lab), dim), dtype=np.float32)
            x *= np.float32(self.noise / math.sqrt(dim))
            x += self.centres[lab_sorted]
            z = rng.standard_normal((len(lab), rank), dtype=np.float32) / np.float32(math.sqrt(rank))
            cuts = np.flatnonzero(np.diff(lab_sorted)) + 1
            for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(lab)]):
                c = lab_sorted[a]
                x[a:b] += (z[a:b] * self.spread[c]) @ self.bases[c]
            x /= np.linalg.norm(x, axis=1, keepdims=True)
            out[start + order] = x  # back to random order: insertion order must not follow the clusters
        return out, labels


def neighbour_cosines(xb: np.ndarray, truth_scores: np.ndarray, seed: int) -> dict[str, float]:
    rng = np.random.default_rng([seed, 2])
    a, b = rng.integers(0, len(xb), (2, 20_000))
    return {
        "top1": round(float(truth_scores[:, 0].mean()), 4),
        "top10": round(float(truth_scores[:, K - 1].mean()), 4),
        "random_pair": round(float(np.einsum("ij,ij->i", xb[a], xb[b]).mean()), 4),
    }


# -- exact search and recall --------------------------------------------------------------------------


def merge_top_k(
    best: tuple[np.ndarray, np.ndarray], scores: np.ndarray, rows: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    s = np.concatenate([best[0], scores], axis=1)
    r = np.concatenate([best[1], rows], axis=1)
    part = np.argpartition(-s, k - 1, axis=1)[:, :k]
    s, r = np.take_along_axis(s, part, 1), np.take_along_axis(r, part, 1)
    order = np.argsort(-s, axis=1, kind="stable")
    return np.take_along_axis(s, order, 1), np.take_along_axis(r, order, 1)


def exact_top_k(xq: np.ndarray, xb: np.ndarray, rows: np.ndarray, k: int, block: int = 1 << 17) -> np.ndarray:
    """Rows (into xb) of the exact top k of each query among ``rows``, block by block (faiss.knn)."""
    best = (np.full((len(xq), 0), -np.inf, np.float32), np.zeros((len(xq), 0), np.int64))
    for start in range(0, len(rows), block):
        sub = rows[start : start + block]
        scores, idx = faiss.knn(xq, np.ascontiguousarray(xb[sub]), min(k, len(sub)), metric=faiss.METRIC_INNER_PRODUCT)
        best = merge_top_k(best, scores, sub[idx], k)
    return best[1]


def recall_at_k(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean over queries of |found ∩ truth| / |truth| (truth rows -1 are padding, not counted)."""
    found = np.asarray(found, dtype=np.int64)
    hits = (found[:, :, None] == truth[:, None, :]) & (truth[:, None, :] >= 0)
    denominators = np.maximum((truth >= 0).sum(axis=1), 1)
    return round(float((hits.any(axis=1).sum(axis=1) / denominators).mean()), 4)


def short_fraction(rows: np.ndarray, want: int) -> float:
    return round(float((np.count_nonzero(np.asarray(rows) >= 0, axis=1) < want).mean()), 4)


# -- timing -------------------------------------------------------------------------------------------


def one_by_one(search: Callable[[np.ndarray], Any], singles: list[np.ndarray]) -> Callable[[], np.ndarray]:
    """A workload asking every query alone; returns the rows found (for recall)."""

    def run() -> np.ndarray:
        return np.vstack([np.asarray(search(q)).reshape(1, -1)[:, :K] for q in singles])

    return run


def warm(search: Callable[[np.ndarray], Any], singles: list[np.ndarray], count: int = 100) -> None:
    for q in singles[:count]:
        search(q)


def race(workloads: dict[str, Callable[[], Any]], passes: int, warmup: Callable[[], None] | None = None) -> dict:
    """Run each workload ``passes`` times, interleaved pass by pass. Per name: seconds of each pass, result."""
    if warmup is not None:
        warmup()
    seconds: dict[str, list[float]] = {name: [] for name in workloads}
    results: dict[str, Any] = {}
    for _ in range(passes):
        for name, work in workloads.items():
            t = time.perf_counter()
            results[name] = work()
            seconds[name].append(time.perf_counter() - t)
    return {name: (seconds[name], results[name]) for name in workloads}


def interleaved(searches: dict[str, tuple[Callable[[np.ndarray], Any], list[np.ndarray]]], passes: int) -> dict:
    """Time several one-query-at-a-time searches interleaved query by query, in rotating order.

    Per name: (seconds of each pass, rows found). Each query runs through every search back to back, the
    first one changing from query to query, so machine noise and cache warmth hit all of them alike:
    per-pass interleaving (``race``) let load shifts of a loaded 2-core machine into the overhead ratio.
    """
    names = list(searches)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    found: dict[str, list[np.ndarray]] = {}
    n_queries = len(next(iter(searches.values()))[1])
    for _ in range(passes):
        total = dict.fromkeys(names, 0.0)
        found = {name: [] for name in names}
        for i in range(n_queries):
            for j in range(len(names)):
                name = names[(i + j) % len(names)]
                search, queries = searches[name]
                t = time.perf_counter()
                rows = search(queries[i])
                total[name] += time.perf_counter() - t
                found[name].append(np.asarray(rows).reshape(1, -1)[:, :K])
        for name in names:
            seconds[name].append(total[name])
    return {name: (seconds[name], np.vstack(found[name])) for name in names}


def qps(n: int, seconds: list[float]) -> float:
    return round(n / statistics.median(seconds), 1)


def ratio(numer: list[float], denom: list[float]) -> float:
    return round(statistics.median(a / b for a, b in zip(numer, denom)), 3)


def serialized_bytes(index: faiss.Index) -> int:
    """Size of ``faiss.write_index`` output, counted as it streams (no copy of the index in memory)."""
    total = 0

    def count(chunk: bytes) -> None:
        nonlocal total
        total += len(chunk)

    faiss.write_index(index, faiss.PyCallbackIOWriter(count))
    return total


def same_input(vi: VectorIndex, queries: list[np.ndarray]) -> list[np.ndarray]:
    """The queries exactly as VectorIndex.search hands them to faiss (its private _prepare)."""
    return [vi._prepare(q, "queries", allow_1d=True) for q in queries]


def with_search(vi: VectorIndex, **changes: Any) -> VectorIndex:
    """The same VectorIndex with other search settings."""
    vi.set_search(**changes)
    return vi


# -- sweeps -------------------------------------------------------------------------------------------


def build_ragline(xb: np.ndarray, config: VectorIndexConfig, build_threads: int, train_sample: int, seed: int):
    log(f"building ragline {config.kind} over {len(xb):,} vectors ({build_threads} threads)")
    t = time.perf_counter()
    with omp_threads(build_threads):
        if train_sample and config.kind in ("ivf", "ivfpq") and train_sample < len(xb):
            rng = np.random.default_rng([seed, 3])
            vi = VectorIndex(xb.shape[1], config)
            vi.train(xb[np.sort(rng.choice(len(xb), train_sample, replace=False))])
            vi.add(xb)
        else:
            vi = VectorIndex.build(xb, config)
    build_s = round(time.perf_counter() - t, 2)
    log(f"  built in {build_s}s: {vi.stats}")
    return vi, build_s


def sweep_ragline_vs_faiss(
    vi: VectorIndex, xq: np.ndarray, truth: np.ndarray, param: str, values: list[int], passes: int
) -> tuple[list[dict], list[dict]]:
    """(ragline rows, faiss rows) of the sweep of ``param`` (ef_search or nprobe) on one faiss object."""
    index = vi._index
    kind = vi.stats["effective_kind"]
    singles = [xq[i : i + 1] for i in range(len(xq))]
    # faiss gets the very vectors ragline searches with (ragline normalizes again; the last bits can change).
    raw_singles, raw_batch = same_input(vi, singles), same_input(vi, [xq])[0]
    ours, theirs = [], []
    for value in values:
        with_search(vi, **{param: value})
        if kind == "hnsw":
            index.hnsw.efSearch = max(value, K)  # what ragline passes (efSearch at least k)
        else:
            index.nprobe = min(value, index.nlist)
        warm(lambda q: vi.search(q, K), singles)
        timed = interleaved(
            {
                "ragline": (lambda q: vi.search(q, K)[1], singles),
                "faiss": (lambda q: index.search(q, K)[1], raw_singles),
            },
            passes,
        )
        batched = race({"ragline": lambda: vi.search(xq, K)[1], "faiss": lambda: index.search(raw_batch, K)[1]}, passes)
        (r_s, r_rows), (f_s, f_rows) = timed["ragline"], timed["faiss"]
        (rb_s, rb_rows), (fb_s, _) = batched["ragline"], batched["faiss"]
        row = {param: value, "recall_at_10": recall_at_k(r_rows, truth)}
        ours.append(
            row
            | {
                "qps_single": qps(len(xq), r_s),
                "qps_batch": qps(len(xq), rb_s),
                "recall_at_10_batch": recall_at_k(rb_rows, truth),
                "overhead_ratio": ratio(r_s, f_s),
                "overhead_us": round(1e6 * (statistics.median(r_s) - statistics.median(f_s)) / len(xq), 1),
                "overhead_ratio_batch": ratio(rb_s, fb_s),
                "same_results": bool(np.array_equal(r_rows, f_rows)),
            }
        )
        theirs.append(
            {param: value, "recall_at_10": recall_at_k(f_rows, truth), "qps_single": qps(len(xq), f_s)}
            | {"qps_batch": qps(len(xq), fb_s)}
        )
        log(f"  {kind} {param}={value}: ragline {ours[-1]}")
        log(f"  {' ' * len(kind)} {param}={value}: faiss   {theirs[-1]}")
    return ours, theirs


def sweep_hnswlib(
    xb: np.ndarray, xq: np.ndarray, truth: np.ndarray, efs: list[int], args: argparse.Namespace
) -> dict[str, Any]:
    log(f"building hnswlib over {len(xb):,} vectors ({args.build_threads} threads)")
    p = hnswlib.Index(space="ip", dim=xb.shape[1])
    t = time.perf_counter()
    p.init_index(max_elements=len(xb), ef_construction=200, M=32, random_seed=args.seed)
    p.add_items(xb, np.arange(len(xb)), num_threads=args.build_threads)
    build_s = round(time.perf_counter() - t, 2)
    log(f"  built in {build_s}s")
    p.set_num_threads(args.threads)
    singles = [xq[i : i + 1] for i in range(len(xq))]
    sweep = []
    for ef in efs:
        p.set_ef(ef)
        timed = race(
            {
                "single": one_by_one(lambda q: p.knn_query(q, K, num_threads=1)[0], singles),
                "batch": lambda: p.knn_query(xq, K, num_threads=args.threads)[0],
            },
            args.passes,
            warmup=lambda: warm(lambda q: p.knn_query(q, K, num_threads=1), singles),
        )
        (s_s, s_rows), (b_s, b_rows) = timed["single"], timed["batch"]
        sweep.append(
            {"ef_search": ef, "recall_at_10": recall_at_k(s_rows, truth), "qps_single": qps(len(xq), s_s)}
            | {"qps_batch": qps(len(xq), b_s), "recall_at_10_batch": recall_at_k(b_rows, truth)}
        )
        log(f"  hnswlib ef={ef}: {sweep[-1]}")
    size = int(p.index_file_size())
    p = None  # free it before the next part
    gc.collect()
    return {"build_s": build_s, "serialized_bytes": size, "sweep": sweep}


def hnsw_part(
    xb: np.ndarray, xq: np.ndarray, truth: np.ndarray, args: argparse.Namespace
) -> tuple[dict[str, Any], VectorIndex]:
    config = VectorIndexConfig(kind="hnsw", m=32, ef_construction=200)
    vi, build_s = build_ragline(xb, config, args.build_threads, 0, args.seed)
    ours, theirs = sweep_ragline_vs_faiss(vi, xq, truth, "ef_search", args.ef, args.passes)
    with_search(vi, ef_search=config.ef_search)
    result = {
        "hnsw": {"build_s": build_s, "serialized_bytes": serialized_bytes(vi._index), "stats": vi.stats}
        | {"sweep": ours},
        "faiss-hnsw": {"sweep": theirs},
    }
    return result, vi


def ivf_part(kind: str, xb: np.ndarray, xq: np.ndarray, truth: np.ndarray, args: argparse.Namespace) -> dict:
    config = VectorIndexConfig(kind=kind, nlist=args.nlist, pq_bits=args.pq_bits)
    vi, build_s = build_ragline(xb, config, args.build_threads, args.ivf_train_sample, args.seed)
    stats = vi.stats
    if stats["effective_kind"] != kind:
        log(f"  {kind} fell back to {stats['effective_kind']}: skipped")
        return {kind: {"skipped": f"fell back to {stats['effective_kind']}", "stats": stats}}
    ours, theirs = sweep_ragline_vs_faiss(vi, xq, truth, "nprobe", args.nprobe, args.passes)
    size = serialized_bytes(vi._index)
    del vi
    gc.collect()
    return {
        kind: {"build_s": build_s, "train_sample": args.ivf_train_sample or len(xb), "serialized_bytes": size}
        | {"stats": stats, "sweep": ours},
        f"faiss-{kind}": {"sweep": theirs},
    }


# -- filtered search ----------------------------------------------------------------------------------


def filtered_part(
    vi: VectorIndex, xb: np.ndarray, xq: np.ndarray, unfiltered: list[dict], args: argparse.Namespace
) -> dict[str, Any]:
    index = vi._index
    n = len(xb)
    rng = np.random.default_rng([args.seed, 4])
    singles = [xq[i : i + 1] for i in range(len(xq))]
    sub = singles[: args.exact_subset]
    raw_singles = same_input(vi, singles)
    default_ef = VectorIndexConfig().ef_search
    rows_out = []
    for s in args.selectivities:
        allowed_rows = np.sort(rng.choice(n, max(1, round(s * n)), replace=False))
        mask = np.zeros(n, dtype=bool)
        mask[allowed_rows] = True
        prepared = vi.allow(mask)  # once, as Index.search_vector prepares a segment's filter per commit
        want = min(K, len(allowed_rows))
        log(f"filtered {s:g} ({len(allowed_rows):,} rows): exact truth")
        with omp_threads(args.build_threads):
            truth = exact_top_k(xq, xb, allowed_rows, K)
        bitmap = np.packbits(mask, bitorder="little")
        entry: dict[str, Any] = {"selectivity": s, "allowed_rows": len(allowed_rows), "faiss-hnsw": [], "approx": []}
        for ef in args.filter_ef:
            params = faiss.SearchParametersHNSW(efSearch=max(ef, K), sel=faiss.IDSelectorBitmap(bitmap))
            with_search(vi, ef_search=ef, exact_search_below=0.0)
            warm(lambda q, m=prepared: vi.search(q, K, allowed=m), singles[:50])
            timed = interleaved(
                {
                    "faiss": (lambda q, p=params: index.search(q, K, params=p)[1], raw_singles),
                    "ragline": (lambda q, m=prepared: vi.search(q, K, allowed=m)[1], singles),
                },
                args.passes,
            )
            (f_s, f_rows), (r_s, r_rows) = timed["faiss"], timed["ragline"]
            entry["faiss-hnsw"].append(
                {
                    "ef_search": ef,
                    "short_fraction": short_fraction(f_rows, want),
                    "recall_at_10": recall_at_k(f_rows, truth),
                }
                | {"qps_single": qps(len(xq), f_s)}
            )
            entry["approx"].append(
                {
                    "ef_search": ef,
                    "short_fraction": short_fraction(r_rows, want),
                    "recall_at_10": recall_at_k(r_rows, truth),
                }
                | {"qps_single": qps(len(xq), r_s), "redone_exactly": entry["faiss-hnsw"][-1]["short_fraction"]}
                | {"overhead_ratio_vs_faiss": ratio(r_s, f_s)}
            )
            log(f"  ef={ef}: faiss {entry['faiss-hnsw'][-1]}")
            log(f"  ef={ef}: ragline approx {entry['approx'][-1]}")
        with_search(vi, ef_search=default_ef, exact_search_below=1.0)
        timed = race({"exact": one_by_one(lambda q, m=prepared: vi.search(q, K, allowed=m)[1], sub)}, 1)
        e_s, e_rows = timed["exact"]
        entry["exact"] = {
            "queries": len(sub),
            "short_fraction": short_fraction(e_rows, want),
            "recall_at_10": recall_at_k(e_rows, truth[: len(sub)]),
            "qps_single": qps(len(sub), e_s),
        }
        log(f"  ragline exact: {entry['exact']}")
        approx_default = next((a for a in entry["approx"] if a["ef_search"] == default_ef), None)
        uses_exact = len(allowed_rows) < EXACT_SEARCH_BELOW * n
        entry["default"] = {"mode": "exact" if uses_exact else "approx"} | (
            entry["exact"] if uses_exact else (approx_default or {})
        )
        rows_out.append(entry)
    with_search(vi, ef_search=default_ef, exact_search_below=EXACT_SEARCH_BELOW)
    recall = next((r["recall_at_10"] for r in unfiltered if r["ef_search"] == default_ef), None)
    return {"filter_ef": args.filter_ef, "rows": rows_out, "threshold": threshold(rows_out, default_ef, recall, args)}


def threshold(rows: list[dict], ef: int, unfiltered_recall: float | None, args: argparse.Namespace) -> dict:
    """Where exact beats approximate search at ``ef``: it is faster, or approximate recall falls short.

    Short means below ``--recall-target`` and more than 0.01 below the unfiltered recall at that ef (a
    filter should not cost recall that the unfiltered search has).
    """
    bar = args.recall_target if unfiltered_recall is None else min(args.recall_target, unfiltered_recall - 0.01)
    exact_wins, evidence = [], []
    for row in rows:
        approx = next((a for a in row["approx"] if a["ef_search"] == ef), None)
        if approx is None:
            continue
        faster = row["exact"]["qps_single"] >= approx["qps_single"]
        worse = approx["recall_at_10"] < bar
        evidence.append(
            {"selectivity": row["selectivity"], "allowed_rows": row["allowed_rows"]}
            | {"approx_recall": approx["recall_at_10"], "approx_qps": approx["qps_single"]}
            | {"exact_qps": row["exact"]["qps_single"], "exact_faster": faster, "approx_recall_short": worse}
        )
        if faster or worse:
            exact_wins.append(row["selectivity"])
    tested = sorted(row["selectivity"] for row in rows)
    above = [s for s in tested if s > max(exact_wins, default=0.0)]
    suggested = (min(above) if above else 1.0) if exact_wins else 0.0
    return {
        "ef_search": ef,
        "recall_bar": round(bar, 4),
        "unfiltered_recall": unfiltered_recall,
        "exact_wins_at": sorted(exact_wins),
        "suggested_exact_search_below": suggested,
        "shipped_exact_search_below": EXACT_SEARCH_BELOW,
        "evidence": evidence,
    }


# -- SciFact and the embedder -------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def scifact_texts(folder: Path) -> tuple[list[str], list[str]]:
    docs = read_jsonl(folder / "corpus.jsonl")
    queries = read_jsonl(folder / "queries.jsonl")
    passages = [f"{d.get('title') or ''}\n{d['text']}" if d.get("title") else d["text"] for d in docs]
    return passages, [q["text"] for q in queries]


def load_models(args: argparse.Namespace) -> tuple[Any, Any] | None:
    """(uncached embedder, cached embedder), or None when ragline.models is not there."""
    try:
        from ragline.models import CachedEmbedder, EmbeddingCache, load_embedder
    except ImportError as error:
        log(f"ragline.models not available ({error})")
        return None
    import torch

    torch.set_num_threads(args.embed_threads)
    embedder = load_embedder(args.embedder)
    cache = EmbeddingCache(args.cache) if args.cache else None
    return embedder, CachedEmbedder(embedder, cache)


def scifact_part(args: argparse.Namespace, models: tuple[Any, Any] | None) -> dict[str, Any]:
    if args.vectors:
        if not args.query_vectors:
            return {"skipped": "--vectors needs --query-vectors"}
        xb = np.load(args.vectors).astype(np.float32)
        xq = np.load(args.query_vectors).astype(np.float32)
        source: dict[str, Any] = {"vectors": str(args.vectors), "query_vectors": str(args.query_vectors)}
    elif models is not None:
        passages, queries = scifact_texts(args.scifact)
        _, cached = models
        log(f"scifact: {len(passages):,} passages, {len(queries):,} queries through the embedding cache")
        t = time.perf_counter()
        xb = cached.embed_passages(passages)
        xq = cached.embed_queries(queries)
        source = {"embedder": cached.id, "cache": str(cached.cache.path), "computed": cached.computed}
        source |= {"cached": cached.cached, "embed_s": round(time.perf_counter() - t, 2)}
    else:
        return {"skipped": "no ragline.models and no --vectors"}
    xb /= np.linalg.norm(xb, axis=1, keepdims=True)
    xq /= np.linalg.norm(xq, axis=1, keepdims=True)
    log(f"scifact: {xb.shape} passages, {xq.shape} queries: exact truth")
    flat = faiss.IndexFlatIP(xb.shape[1])
    flat.add(xb)
    t = time.perf_counter()
    truth_scores, truth = flat.search(xq, K)
    exact_s = time.perf_counter() - t
    result: dict[str, Any] = {"source": source, "n": len(xb), "queries": len(xq), "dim": int(xb.shape[1])}
    result |= {"exact_qps_batch": round(len(xq) / exact_s, 1)}
    result["neighbour_cosines"] = neighbour_cosines(xb, truth_scores, args.seed)
    hnsw, vi = hnsw_part(xb, xq, truth, args)
    del vi
    result["methods"] = hnsw
    if "hnswlib" not in args.skip and hnswlib is not None:
        result["methods"]["hnswlib"] = sweep_hnswlib(xb, xq, truth, args.ef, args)
    return result


def embedding_part(args: argparse.Namespace, models: tuple[Any, Any]) -> dict[str, Any]:
    embedder, _ = models
    passages, queries = scifact_texts(args.scifact)
    passages = passages[: args.embed_passages]
    log(f"embedding throughput: {len(passages)} passages, {len(queries)} queries, {args.embed_threads} threads")
    embedder.embed_passages(passages[:32], progress=False)  # warm-up (first-call allocations)
    t = time.perf_counter()
    embedder.embed_passages(passages, batch_size=32, progress=False)
    passage_s = time.perf_counter() - t
    t = time.perf_counter()
    embedder.embed_queries(queries, batch_size=32)
    query_s = time.perf_counter() - t
    single = []
    for text in queries[: args.embed_single]:
        t = time.perf_counter()
        embedder.embed_queries([text])
        single.append(time.perf_counter() - t)
    return {
        "embedder": embedder.id,
        "threads": args.embed_threads,
        "passages": len(passages),
        "passages_per_s": round(len(passages) / passage_s, 1),
        "queries": len(queries),
        "queries_per_s": round(len(queries) / query_s, 1),
        "single_query_ms_p50": round(1e3 * statistics.median(single), 2),
    }


# -- plot ---------------------------------------------------------------------------------------------


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("synthetic", result.get("synthetic"))]
    if result.get("scifact", {}).get("methods"):
        panels.append(("scifact", result["scifact"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(9 * len(panels), 6), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (name, part) in zip(axes[0], panels):
        methods = part["methods"]
        for i, (method, data) in enumerate(methods.items()):
            sweep = data.get("sweep") or []
            if not sweep:
                continue
            colour = colours[i % len(colours)]
            method = f"ragline {method}" if method in ("hnsw", "ivf", "ivfpq") else method
            x = [r["recall_at_10"] for r in sweep]
            ax.plot(x, [r["qps_single"] for r in sweep], "o-", color=colour, label=f"{method} (1 query/call)")
            ax.plot(x, [r["qps_batch"] for r in sweep], "s--", color=colour, alpha=0.5, label=f"{method} (batched)")
            key = "ef_search" if "ef_search" in sweep[0] else "nprobe"
            for r in sweep:
                ax.annotate(str(r[key]), (r["recall_at_10"], r["qps_single"]), fontsize=6, alpha=0.7)
        for label, value, marker in (
            ("exact, batched", "exact_qps_batch", "k*"),
            ("exact, 1 query", "exact_qps_single", "kx"),
        ):
            if part.get(value):
                ax.plot([1.0], [part[value]], marker, markersize=9, label=f"faiss flat ({label})")
        ax.set_yscale("log")
        ax.set_xlabel("recall@10 (vs exact)")
        ax.set_ylabel(f"queries per second ({result['config']['threads']} thread(s))")
        ax.set_title(f"{name}: n={part['n']:,}, d={part['dim']}, {part['queries']:,} queries")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# -- main ---------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ints = lambda text: [int(v) for v in text.split(",") if v]  # noqa: E731
    floats = lambda text: [float(v) for v in text.split(",") if v]  # noqa: E731
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="synthetic base vectors")
    parser.add_argument("--queries", type=int, default=1000, help="synthetic queries")
    parser.add_argument("--centres", type=int, default=None, help="mixture components (n/500, 100-2000)")
    parser.add_argument("--rank", type=int, default=32, help="dimension of each cluster's spread")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="search threads for every system")
    parser.add_argument("--build-threads", type=int, default=os.cpu_count() or 1, help="index build threads")
    parser.add_argument("--passes", type=int, default=3, help="timed passes per setting (median reported)")
    parser.add_argument("--ef", type=ints, default=[16, 32, 64, 128, 256, 512], help="ef_search values")
    parser.add_argument("--nprobe", type=ints, default=[1, 4, 16, 64, 128], help="IVF nprobe values")
    parser.add_argument("--nlist", type=int, default=None, help="IVF lists (default: ragline's 4*sqrt(n))")
    parser.add_argument("--ivf-train-sample", type=int, default=0, help="train IVF on this many (0: all)")
    parser.add_argument("--pq-bits", type=int, default=8, help="ivfpq bits per sub-vector code")
    parser.add_argument("--selectivities", type=floats, default=[0.5, 0.1, 0.05, 0.02, 0.01, 0.005, 0.001])
    parser.add_argument("--filter-ef", type=ints, default=[128, 256, 512], help="ef_search values, filtered")
    parser.add_argument("--exact-subset", type=int, default=200, help="queries timed for exact search")
    parser.add_argument("--recall-target", type=float, default=0.95, help="for the threshold suggestion")
    parser.add_argument("--scifact", type=Path, default=None, help="BEIR SciFact folder")
    parser.add_argument("--vectors", type=Path, help="SciFact passage vectors (.npy) instead of embedding")
    parser.add_argument("--query-vectors", type=Path, help="SciFact query vectors (.npy), with --vectors")
    parser.add_argument("--embedder", default=None, help="embedding model (default: ragline's default)")
    parser.add_argument("--cache", type=Path, default=None, help="embedding cache (default: ragline's)")
    parser.add_argument("--embed-passages", type=int, default=500)
    parser.add_argument("--embed-single", type=int, default=100, help="queries embedded one at a time")
    parser.add_argument("--embed-threads", type=int, default=None, help="torch threads (default --threads)")
    parser.add_argument("--skip", default="", help=f"comma-separated parts to leave out: {', '.join(PARTS)}")
    parser.add_argument("--quick", action="store_true", help="30,000 vectors, 200 queries, 1 pass, no models")
    parser.add_argument("--output", choices=["json", "pretty"], default="json")
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder for ann.json and the plot")
    args = parser.parse_args(argv)
    args.threads = THREADS
    args.skip = {part.strip() for part in args.skip.split(",") if part.strip()}
    unknown = args.skip - set(PARTS)
    if unknown:
        parser.error(f"unknown --skip parts {sorted(unknown)}; known: {', '.join(PARTS)}")
    if args.quick:
        args.n, args.queries, args.passes = 30_000, 200, 1
        args.pq_bits = 4  # 16-centroid codebooks: 96 k-means of 256 centroids take minutes even here
        args.exact_subset = min(args.exact_subset, 50)
        args.skip |= {"embed"} if args.vectors else {"scifact", "embed"}
    args.embed_threads = args.embed_threads or args.threads
    if args.centres is None:  # about 500 vectors per cluster, whatever n: comparable difficulty
        args.centres = min(2000, max(100, args.n // 500))
    if args.scifact is None:
        args.scifact = bench_root() / "scifact"
    return args


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "machine": platform.machine(), "cpus": str(os.cpu_count())}
    for package in ("ragline", "faiss-cpu", "numpy", "hnswlib", "torch", "sentence-transformers"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[package] = metadata.version(package)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    faiss.omp_set_num_threads(args.threads)
    config = {
        key: value if not isinstance(value, Path | set) else (str(value) if isinstance(value, Path) else sorted(value))
        for key, value in vars(args).items()
    }
    result: dict[str, Any] = {"benchmark": "ann", "k": K, "config": config, "thread_env": THREAD_ENV}
    result["versions"] = versions()

    # Synthetic data and exact truth.
    log(f"generating {args.n:,} + {args.queries:,} clustered {DIM}-d vectors ({args.centres} centres)")
    t = time.perf_counter()
    mixture = Mixture.make(args.centres, DIM, args.rank, args.seed)
    xb, _ = mixture.sample(args.n, args.seed)
    xq, _ = mixture.sample(args.queries, args.seed + 1_000_003)
    del mixture
    synthetic: dict[str, Any] = {"n": args.n, "queries": args.queries, "dim": DIM, "centres": args.centres}
    synthetic["generate_s"] = round(time.perf_counter() - t, 2)
    log("exact truth (faiss IndexFlatIP)")
    flat = faiss.IndexFlatIP(DIM)
    flat.add(xb)
    timed = race({"batch": lambda: flat.search(xq, K)}, 1)
    seconds, (truth_scores, truth) = timed["batch"]
    synthetic["exact_qps_batch"] = qps(args.queries, seconds)
    singles = [xq[i : i + 1] for i in range(min(args.exact_subset, args.queries))]
    timed = race({"single": one_by_one(lambda q: flat.search(q, K)[1], singles)}, 1)
    synthetic["exact_qps_single"] = qps(len(singles), timed["single"][0])
    synthetic["neighbour_cosines"] = neighbour_cosines(xb, truth_scores, args.seed)
    flat = None  # free it before the next part
    gc.collect()
    log(f"exact: {synthetic}")

    out = args.results / "ann.json"
    args.results.mkdir(parents=True, exist_ok=True)

    def checkpoint() -> None:
        """Write what is measured so far: an hour-long run interrupted late keeps its finished parts."""
        partial = result | {"complete": False, "total_s": round(elapsed(), 1)}
        write_result(out, partial)

    methods, vi = hnsw_part(xb, xq, truth, args)
    synthetic["methods"] = methods
    result["synthetic"] = synthetic
    checkpoint()
    if "filtered" not in args.skip:
        result["filtered"] = filtered_part(vi, xb, xq, methods["hnsw"]["sweep"], args)
        checkpoint()
    del vi
    gc.collect()
    if "hnswlib" not in args.skip:
        if hnswlib is None:
            methods["hnswlib"] = {"skipped": "hnswlib is not installed"}
        else:
            methods["hnswlib"] = sweep_hnswlib(xb, xq, truth, args.ef, args)
        checkpoint()
    for kind in ("ivf", "ivfpq"):
        if kind not in args.skip:
            methods.update(ivf_part(kind, xb, xq, truth, args))
            checkpoint()
    del xb
    gc.collect()
    synthetic["peak_rss_gib"] = round(peak_rss_gib(), 2)  # before any model is loaded

    models = None
    if not {"scifact", "embed"} <= args.skip and not (args.vectors and "embed" in args.skip):
        models = load_models(args)
    if "embed" not in args.skip:
        result["embedding"] = embedding_part(args, models) if models else {"skipped": "no ragline.models"}
    if "scifact" not in args.skip:
        result["scifact"] = scifact_part(args, models)

    result["peak_rss_gib"] = round(peak_rss_gib(), 2)
    result["complete"] = True
    result["total_s"] = round(elapsed(), 1)
    write_result(out, result)
    plot(result, args.results / "ann_recall_qps.png")
    log(f"wrote {args.results / 'ann.json'} and {args.results / 'ann_recall_qps.png'}")
    print_result(result, args.output)
    return result


if __name__ == "__main__":
    main()
