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
from itertools import repeat
from typing import Any

import numpy as np

from ragline.index.bm25 import absent_weight
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
    if _state["kernels"] is None and not _use_compiled(lambda: _postings_of(segments, fields, scorer, gids)):
        # Masks first: a filter that fails must fail before any score lands in the shared buffers.
        masks = [seg.filter_mask(node) if node is not None else NO_MASK for seg in segments]
        return _search_one(segments, fields, scorer, gids, k, masks, buffers, generation)
    plan = _SegmentPlan.of(segments, fields, scorer, node)  # holds the masks: made before any scoring
    if len(plan.parts) == 1 and not plan.absent:  # the common case, with the fewest steps in Python
        scores = buffers.get(generation, 0, plan.lengths[0])
        args = (gids, *plan.parts[0], int(k), scores)
        if plan.search_query is None:
            search_query = compiled_kernels().search_query
            rows, values = search_query(*args)  # compiled (or loaded) for these argument types
            plan.search_query = _entry_point(search_query, args)
        else:
            rows, values = plan.search_query(*args)
        return list(zip(repeat(0, rows.size), rows.tolist(), values.tolist()))
    return _search_compiled(plan, scorer, np.array([0, gids.size], dtype=np.int64), gids, k, buffers, generation, 1)[0]


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

    The terms of all queries are mapped to ids in one pass, the filter masks computed once, and the
    kernels chosen once: a batch is as many queries as it holds, so a batch of more than
    ``COMPILED_AFTER`` (or one large enough) loads the compiled kernels at once. On them, each segment
    answers the whole batch in one compiled call (``kernels.search_segment``); ``threads`` > 1 splits
    the queries into that many contiguous shares, one compiled call per share on its own thread and
    buffer (the kernels release the GIL), so the results do not depend on ``threads``.
    """
    if k <= 0 or not queries:
        return [[] for _ in queries]
    query_ptr, query_gids = _batch_term_ids(scorer, queries)
    _state["queries"] += len(queries) - 1  # _use_compiled counts the last one
    if not _use_compiled(lambda: _postings_of(segments, fields, scorer, query_gids)):
        masks = [seg.filter_mask(node) if node is not None else NO_MASK for seg in segments]
        return [
            _search_one(segments, fields, scorer, query_gids[a:b], k, masks, buffers, generation)
            for a, b in zip(query_ptr[:-1].tolist(), query_ptr[1:].tolist())
        ]
    plan = _SegmentPlan.of(segments, fields, scorer, node)
    return _search_compiled(plan, scorer, query_ptr, query_gids, k, buffers, generation, threads)


def _term_ids(scorer: BM25Scorer, terms: Sequence[str]) -> np.ndarray:
    """Collection-wide ids of the ``terms`` the index knows, in query order (repeats kept)."""
    get = scorer.stats.vocab.get
    ids = [get(t, -1) for t in terms]
    if -1 in ids:
        ids = [g for g in ids if g >= 0]
    return np.array(ids, dtype=np.int64)


def _entry_point(dispatcher: Any, args: tuple[Any, ...]) -> Callable[..., Any]:
    """The machine code ``dispatcher`` (a numba function) runs for arguments of the types of ``args``.

    Calling it skips the dispatcher's typing of every argument on each call (a few microseconds for the
    eleven arguments of ``search_query``); the plan holding it always passes arguments of these types.
    Where numba does not give it, the dispatcher itself.
    """
    try:
        signature = tuple(dispatcher.typeof_pyval(a) for a in args)
        return dispatcher.overloads[signature].entry_point
    except (AttributeError, KeyError):
        return dispatcher


def _batch_term_ids(scorer: BM25Scorer, queries: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """``_term_ids`` of every query at once: (offsets, ids), query q's ids at ``ids[offsets[q]:offsets[q + 1]]``."""
    lengths = np.fromiter(map(len, queries), dtype=np.int64, count=len(queries))
    flat = [t for terms in queries for t in terms]
    ids = np.fromiter(map(scorer.stats.vocab.get, flat, repeat(-1, len(flat))), dtype=np.int64, count=len(flat))
    known = ids >= 0
    owner = np.repeat(np.arange(len(queries)), lengths)
    query_ptr = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner[known], minlength=len(queries)), out=query_ptr[1:])
    return query_ptr, ids[known]


class _SegmentPlan:
    """What the compiled kernel takes for each segment under one scorer and filter: per-field tuples."""

    def __init__(self, parts: list[tuple[Any, ...]], lengths: list[int], absent: bool) -> None:
        self.parts, self.lengths = parts, lengths  # per segment: the kernel's arguments, the rows
        self.absent = absent  # do matching rows earn a score for query terms they lack (bm25l, bm25+)?
        self.search_query: Callable[..., Any] | None = None  # ``kernels.search_query`` for these parts' types

    @classmethod
    def of(
        cls, segments: Sequence[Segment], fields: Mapping[str, float], scorer: BM25Scorer, node: Any
    ) -> _SegmentPlan:
        """The plan for filter ``node`` (cached on the scorer: segments and weights are fixed per commit)."""
        plan = scorer.plans.get(node)
        if plan is None:
            plan = scorer.plans[node] = cls._make(segments, fields, scorer, node)
            if len(scorer.plans) > 64:
                del scorer.plans[next(iter(scorer.plans))]
        return plan

    @classmethod
    def _make(
        cls, segments: Sequence[Segment], fields: Mapping[str, float], scorer: BM25Scorer, node: Any
    ) -> _SegmentPlan:
        names = list(fields)
        field_weights = np.array([fields[f] for f in names], dtype=np.float64)
        parts = []
        for si, seg in enumerate(segments):
            postings = [seg.fields[f] for f in names]
            parts.append(
                (
                    tuple(p.indptr for p in postings),
                    tuple(p.docs for p in postings),
                    tuple(scorer.weights[si][f] for f in names),
                    tuple(scorer.stats.g2l[si][f] for f in names),
                    field_weights,
                    scorer.stats.deleted[si],
                    seg.filter_mask(node) if node is not None else NO_MASK,
                    seg.filter_rows(node) if node is not None else None,
                )
            )
        return cls(parts, [len(seg) for seg in segments], bool(absent_weight(scorer.params)))


def _search_compiled(
    plan: _SegmentPlan,
    scorer: BM25Scorer,
    query_ptr: np.ndarray,
    query_gids: np.ndarray,
    k: int,
    buffers: ScoreBuffers,
    generation: int,
    threads: int,
) -> list[list[tuple[int, int, float]]]:
    """Every query's top ``k`` over all segments: one compiled call per segment (and share of queries)."""
    search_segment = compiled_kernels().search_segment
    n, n_segments = query_ptr.size - 1, len(plan.parts)
    out_rows = np.empty((n_segments, n, k), dtype=np.int64)
    out_values = np.zeros((n_segments, n, k), dtype=np.float32)  # zeros: the unused tail is cast later
    out_count = np.empty((n_segments, n), dtype=np.int64)
    threads = max(1, min(threads, n))

    def run(first: int, last: int, own_buffers: bool) -> None:
        for si, (parts, n_rows) in enumerate(zip(plan.parts, plan.lengths)):
            # The calling thread reuses its buffers; a pool thread starts its own (zeroed) ones.
            scores = np.zeros(n_rows, np.float32) if own_buffers else buffers.get(generation, si, n_rows)
            out = out_rows[si], out_values[si], out_count[si]
            search_segment(query_ptr, query_gids, *parts, k, first, last, scores, *out)

    if threads == 1:
        run(0, n, False)
    else:
        from concurrent.futures import ThreadPoolExecutor

        size = -(-n // threads)
        with ThreadPoolExecutor(max_workers=threads - 1) as pool:
            waiting = [pool.submit(run, a, min(a + size, n), True) for a in range(size, n, size)]
            run(0, size, False)
            for future in waiting:
                future.result()
    absent = _absent_scores(scorer, query_ptr, query_gids) if plan.absent else None
    if n_segments == 1:
        return _hits_of_one_segment(out_rows[0], out_values[0], out_count[0], absent)
    return _merge_segments(out_rows, out_values, out_count, absent, k)


def _absent_scores(scorer: BM25Scorer, query_ptr: np.ndarray, query_gids: np.ndarray) -> np.ndarray:
    """Per query, the score every matching row earns for the terms it lacks (bm25l, bm25+)."""
    bounds = zip(query_ptr[:-1].tolist(), query_ptr[1:].tolist())
    return np.array([scorer.absent(query_gids[a:b]) for a, b in bounds], dtype=np.float64)


def _hits_of_one_segment(rows, values, count, absent) -> list[list[tuple[int, int, float]]]:
    """Per query, (0, row, score) of one segment's selection (already best first).

    The tuples of all queries are made in one pass and each query's list is a slice of them: per query
    only a slice runs, not three conversions and a zip.
    """
    scores = values.astype(np.float64)
    if absent is not None:
        scores += absent[:, None]
    if count.size and count.min() == rows.shape[1]:  # every query found k rows: no mask
        found_rows, found_scores = rows.ravel().tolist(), scores.ravel().tolist()
    else:
        valid = np.arange(rows.shape[1])[None, :] < count[:, None]
        found_rows, found_scores = rows[valid].tolist(), scores[valid].tolist()
    hits = list(zip(repeat(0), found_rows, found_scores))
    ends = np.cumsum(count).tolist()
    return list(map(hits.__getitem__, map(slice, [0, *ends[:-1]], ends)))


def _merge_segments(rows, values, count, absent, k: int) -> list[list[tuple[int, int, float]]]:
    """Per query, the ``k`` best of every segment's selection: higher score first, then segment and row
    order (a stable sort of the selections laid side by side in segment order)."""
    n_segments, n, _ = rows.shape
    scores = values.astype(np.float64)
    if absent is not None:
        scores += absent[None, :, None]
    valid = np.arange(k)[None, None, :] < count[:, :, None]
    scores = np.where(valid, scores, -np.inf).transpose(1, 0, 2).reshape(n, n_segments * k)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    found = np.minimum(valid.sum(axis=(0, 2)), k).tolist()
    segs = (order // k).tolist()
    best_rows = np.take_along_axis(rows.transpose(1, 0, 2).reshape(n, n_segments * k), order, axis=1).tolist()
    best_scores = np.take_along_axis(scores, order, axis=1).tolist()
    return [list(zip(s[:c], r[:c], v[:c])) for s, r, v, c in zip(segs, best_rows, best_scores, found)]


def _search_one(
    segments: Sequence[Segment],
    fields: Mapping[str, float],
    scorer: BM25Scorer,
    gids: np.ndarray,
    k: int,
    masks: Sequence[np.ndarray],
    buffers: ScoreBuffers,
    generation: int,
) -> list[tuple[int, int, float]]:
    """One query's top ``k`` on the numpy loops, with the filter masks already computed."""
    found_values, found_seg, found_rows = [], [], []
    for si, seg in enumerate(segments):
        scores = buffers.get(generation, si, len(seg))
        visited = 0
        for fname, fweight in fields.items():
            postings = seg.fields[fname]
            g2l = scorer.stats.g2l[si][fname]
            visited += accumulate_numpy(
                postings.indptr, postings.docs, scorer.weights[si][fname], g2l, gids, fweight, scores
            )
        if not visited:
            continue
        rows, values = select_numpy(scores, scorer.stats.deleted[si], masks[si], k)
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
