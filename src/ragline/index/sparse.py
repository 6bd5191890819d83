"""BM25 search over the segments of one commit: accumulate posting weights, select the top k.

A row is a candidate when it contains a query term with positive weight and passes the filter and the
delete set; ties keep segment-then-row order. The inner loops are the compiled kernels of
``kernels.py``; each thread scores into its own per-segment buffers (``ScoreBuffers``).

Loading the compiled kernels costs a process 0.5-1 s (numba, LLVM and the on-disk machine code), far
more than a few queries on numpy take. So a process answers its first ``COMPILED_AFTER`` queries with
the numpy loops below, which compute the same float32 sums in the same order and select the same rows
(equal results, tested), and switches to the compiled kernels after that, or as soon as one query is
large enough for the compiled loops to pay at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragline.index.segment import Segment
from ragline.index.stats import NO_MASK, BM25Scorer

COMPILED_AFTER = 32  # queries a process answers with the numpy loops before it loads the compiled kernels
COMPILED_POSTINGS = 200_000  # a query visiting more postings than this loads them at once

_state = {"queries": 0, "kernels": None}
_state_lock = threading.Lock()


def compiled_kernels() -> Any:
    """The module of compiled kernels, loaded (numba) on first use."""
    if _state["kernels"] is None:
        with _state_lock:
            from ragline.index import kernels  # numba: 0.5-1 s to load, only once the queries pay for it

            _state["kernels"] = kernels
    return _state["kernels"]


def _use_compiled(postings: Callable[[], int]) -> bool:
    """Should this query run on the compiled kernels? Counts the query; ``postings`` is its size."""
    _state["queries"] += 1
    if _state["kernels"] is not None or _state["queries"] > COMPILED_AFTER:
        return True
    return postings() > COMPILED_POSTINGS


def accumulate_numpy(indptr, docs, weights, g2l, gids, field_weight, scores) -> int:
    """``kernels.accumulate`` in numpy: the same float64 product and sum, rounded to float32 per posting."""
    visited = 0
    for g in gids.tolist():
        t = g2l[g]
        if t < 0:
            continue
        start, end = int(indptr[t]), int(indptr[t + 1])
        visited += end - start
        rows = docs[start:end]  # one posting per row and term: no row repeats within a term
        added = scores[rows].astype(np.float64) + field_weight * weights[start:end].astype(np.float64)
        scores[rows] = added.astype(np.float32)
    return visited


def select_numpy(scores: np.ndarray, deleted: np.ndarray, allowed: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' selection in numpy: top ``k`` positive admitted rows, higher score then lower row first.

    Resets every score, as the kernels do.
    """
    rows = np.flatnonzero(scores > 0)
    if deleted.size:
        rows = rows[~deleted[rows]]
    if allowed.size:
        rows = rows[allowed[rows]]
    values = scores[rows]
    order = np.lexsort((rows, -values))[:k]
    scores[:] = 0.0
    return rows[order].astype(np.int64), values[order]


def _postings_of(segments: Sequence[Segment], fields: Mapping[str, float], scorer: BM25Scorer, gids: np.ndarray) -> int:
    """How many postings the query's terms hold in all segments and fields."""
    total = 0
    for si, seg in enumerate(segments):
        for fname in fields:
            indptr, local = seg.fields[fname].indptr, scorer.stats.g2l[si][fname][gids]
            local = local[local >= 0]
            total += int((indptr[local + 1] - indptr[local]).sum())
    return total


class ScoreBuffers:
    """Per thread, one float32 score buffer per segment, all zeros between queries (the kernels reset it)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def get(self, generation: int, si: int, n_rows: int) -> np.ndarray:
        """The buffer of segment ``si`` in commit ``generation`` (a new commit starts new buffers)."""
        cache = getattr(self._local, "by_segment", None)
        if cache is None or self._local.generation != generation:
            cache = self._local.by_segment = {}
            self._local.generation = generation
        if si not in cache:
            cache[si] = np.zeros(n_rows, np.float32)
        return cache[si]


def search_terms(
    segments: Sequence[Segment],
    fields: Mapping[str, float],
    scorer: BM25Scorer,
    terms: Sequence[str],
    k: int,
    node: Any,
    buffers: ScoreBuffers,
    generation: int,
) -> list[tuple[int, int, float]]:
    """(segment, row, score) of the ``k`` best live rows for analyzed ``terms`` passing filter ``node``."""
    if k <= 0:
        return []
    gids = _term_ids(scorer, terms)
    # Masks first: a filter that fails must fail before any score lands in the shared buffers.
    masks = [seg.filter_mask(node) if node is not None else NO_MASK for seg in segments]
    compiled = compiled_kernels() if _use_compiled(lambda: _postings_of(segments, fields, scorer, gids)) else None
    return _search_one(segments, fields, scorer, gids, k, node, masks, compiled, buffers, generation)


def search_terms_batch(
    segments: Sequence[Segment],
    fields: Mapping[str, float],
    scorer: BM25Scorer,
    queries: Sequence[Sequence[str]],
    k: int,
    node: Any,
    buffers: ScoreBuffers,
    generation: int,
    threads: int = 1,
) -> list[list[tuple[int, int, float]]]:
    """``search_terms`` for each of ``queries``, in order, with results equal to one call per query.

    The filter masks are computed once for the batch, and the kernels chosen once: a batch is as many
    queries as it holds, so a batch of more than ``COMPILED_AFTER`` (or one large enough) loads the compiled
    kernels at once. ``threads`` > 1 splits the queries over a thread pool; the compiled kernels release
    the GIL and each thread scores into its own buffers, so the results do not depend on ``threads``.
    """
    if k <= 0 or not queries:
        return [[] for _ in queries]
    all_gids = [_term_ids(scorer, terms) for terms in queries]
    masks = [seg.filter_mask(node) if node is not None else NO_MASK for seg in segments]
    _state["queries"] += len(queries) - 1  # _use_compiled counts the last one
    compiled = (
        compiled_kernels()
        if _use_compiled(lambda: _postings_of(segments, fields, scorer, np.concatenate(all_gids)))
        else None
    )

    def run(part: Sequence[np.ndarray]) -> list[list[tuple[int, int, float]]]:
        return [_search_one(segments, fields, scorer, g, k, node, masks, compiled, buffers, generation) for g in part]

    threads = min(threads, len(queries))
    if threads <= 1:
        return run(all_gids)
    from concurrent.futures import ThreadPoolExecutor

    # One contiguous share of the queries per thread: a task per query would cost more than short queries.
    size = -(-len(all_gids) // threads)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        parts = pool.map(run, [all_gids[i : i + size] for i in range(0, len(all_gids), size)])
        return [hits for part in parts for hits in part]


def _term_ids(scorer: BM25Scorer, terms: Sequence[str]) -> np.ndarray:
    """Collection-wide ids of the ``terms`` the index knows, in query order (repeats kept)."""
    vocab = scorer.stats.vocab
    return np.array([g for g in (vocab.get(t, -1) for t in terms) if g >= 0], dtype=np.int64)


def _search_one(
    segments: Sequence[Segment],
    fields: Mapping[str, float],
    scorer: BM25Scorer,
    gids: np.ndarray,
    k: int,
    node: Any,
    masks: Sequence[np.ndarray],
    compiled: Any,
    buffers: ScoreBuffers,
    generation: int,
) -> list[tuple[int, int, float]]:
    """One query's top ``k`` with the masks and kernels already chosen (``compiled`` None: numpy loops)."""
    found_values, found_seg, found_rows = [], [], []
    one_field = len(fields) == 1
    accumulate = compiled.accumulate if compiled else accumulate_numpy
    for si, seg in enumerate(segments):
        scores = buffers.get(generation, si, len(seg))
        visited = 0
        for fname, fweight in fields.items():
            postings = seg.fields[fname]
            g2l = scorer.stats.g2l[si][fname]
            visited += accumulate(postings.indptr, postings.docs, scorer.weights[si][fname], g2l, gids, fweight, scores)
        if not visited:
            continue
        deleted, allowed = scorer.stats.deleted[si], masks[si]
        if compiled is None:
            rows, values = select_numpy(scores, deleted, allowed, k)
        elif one_field and visited * 8 < len(seg):  # few postings: revisit them, not every row
            rows, values = compiled.select_from_postings(
                postings.indptr, postings.docs, g2l, gids, scores, deleted, allowed, k
            )
        elif node is not None:
            rows, values = compiled.select_from_allowed_rows(scores, seg.filter_rows(node), deleted, k)
        else:
            rows, values = compiled.select_from_rows(scores, deleted, NO_MASK, k)
        if not len(rows):
            continue
        found_values.append(values)
        found_rows.append(rows)
        found_seg.append([si] * len(rows))
    if not found_values:
        return []
    absent = scorer.absent(gids)
    if len(found_values) == 1:  # one segment: already in order
        si = found_seg[0][0]
        return [(si, r, v + absent) for r, v in zip(found_rows[0].tolist(), found_values[0].tolist())]
    values = np.concatenate(found_values).astype(np.float64) + absent
    order = np.argsort(-values, kind="stable")[:k]  # segments in order, rows ascending: ties stay put
    segs, rows = np.concatenate([np.asarray(s, dtype=np.int64) for s in found_seg]), np.concatenate(found_rows)
    return [(int(segs[i]), int(rows[i]), float(values[i])) for i in order]
