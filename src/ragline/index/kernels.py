"""Compiled inner loops of BM25 search (numba): accumulate posting weights, select the top k.

Python-level numpy costs microseconds per call and a query makes several calls per term; at
thousands of queries a second that overhead would be most of the time. These loops are the whole
hot path, compiled once (``cache=True`` keeps the machine code between processes).

Scores accumulate into a per-thread buffer of one float per row, with no bookkeeping in the inner
loop: a branch there ("first time this row is touched?") made it five times slower on SciFact.
Selection then visits either the query's postings again or every row, whichever is fewer, and
resets what it visits, so the buffer is all zeros for the next query.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ROW_BLOCK = 32  # rows whose best score is taken at once by ``select_from_rows``


@njit(cache=True, nogil=True)
def accumulate(indptr, docs, weights, g2l, gids, field_weight, scores):  # pragma: no cover
    """Add ``field_weight * weights[p]`` to ``scores[docs[p]]`` for each posting p of each query term.

    ``weights`` include the IDF and are all positive. ``g2l`` maps global term ids to this segment's
    (-1: absent). Returns the number of postings visited.

    With a field weight of 1 the sum is taken in float32 (40% faster on SciFact): the product is exact
    and a float32 sum rounds to the float32 nearest the float64 sum, as the general loop's does (float64
    carries more than twice float32's 24 bits, so rounding twice never differs from rounding once).
    """
    visited = 0
    for i in range(gids.size):
        t = g2l[gids[i]]
        if t < 0:
            continue
        start, end = indptr[t], indptr[t + 1]
        visited += end - start
        if field_weight == 1.0:
            for p in range(start, end):
                scores[docs[p]] += weights[p]
        else:
            for p in range(start, end):
                scores[docs[p]] += field_weight * weights[p]
    return visited


@njit(cache=True, nogil=True)
def select_from_postings(indptr, docs, g2l, gids, scores, deleted, allowed, k):  # pragma: no cover
    """Top ``k`` over the rows the query's postings reach; resets their scores. See ``_offer``."""
    heap_s = np.empty(k, dtype=np.float32)
    heap_r = np.empty(k, dtype=np.int64)
    size = 0
    bar = np.float32(0.0)  # the heap's worst score once it is full: a plain local, the cheapest test
    for i in range(gids.size):
        t = g2l[gids[i]]
        if t < 0:
            continue
        for p in range(indptr[t], indptr[t + 1]):
            d = docs[p]
            s = scores[d]
            if s != 0.0:  # a row reached by two terms is offered once
                scores[d] = 0.0
                if (s > bar or (s == bar and size == k and d < heap_r[0])) and _admitted(d, deleted, allowed):
                    size = _offer(heap_s, heap_r, size, s, d)
                    if size == k:
                        bar = heap_s[0]
    return _sorted(heap_s, heap_r, size)


@njit(cache=True, nogil=True)
def select_from_rows(scores, deleted, allowed, k):  # pragma: no cover
    """Top ``k`` over every row; resets the scores. See ``_offer``.

    A row-by-row scan costs a compare and a branch per row; instead the best score of each block of
    ``ROW_BLOCK`` rows is taken first, over the scores' bits as integers (the scores are positive or
    zero, and such floats order as their bit patterns do), a loop the compiler vectorizes. Without
    masks, the ``k``-th largest block maximum is reached by ``k`` distinct rows, so no block whose
    maximum is below it can hold a result; with masks only blocks without any score are skipped. The
    blocks left are scanned row by row in ascending order, as a full scan would be.
    """
    n = scores.size
    bits = scores.view(np.int32)
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    block_max = np.empty(n_blocks, dtype=np.int32)
    for b in range(n_blocks):
        block = bits[b * ROW_BLOCK : min((b + 1) * ROW_BLOCK, n)]
        m = np.int32(0)
        for j in range(block.size):
            m = max(m, block[j])
        block_max[b] = m
    floor = np.int32(1)  # the bits of the smallest positive float32: a block without a score is skipped
    if not deleted.size and not allowed.size and n_blocks >= k:
        floor = max(floor, _kth_largest(block_max, k))
    heap_s = np.empty(k, dtype=np.float32)
    heap_r = np.empty(k, dtype=np.int64)
    size = 0
    bar = np.float32(0.0)
    for b in range(n_blocks):
        if block_max[b] < floor:
            continue
        for d in range(b * ROW_BLOCK, min((b + 1) * ROW_BLOCK, n)):
            s = scores[d]
            # below the floor a row cannot be a result; rows ascend, so a tie with the worst kept row
            # never displaces it
            if bits[d] >= floor and s > bar and _admitted(d, deleted, allowed):
                size = _offer(heap_s, heap_r, size, s, d)
                if size == k:
                    bar = heap_s[0]
    scores[:] = 0.0
    return _sorted(heap_s, heap_r, size)


@njit(cache=True)
def _kth_largest(values, k):  # pragma: no cover
    """The ``k``-th largest of ``values`` (at least ``k`` of them), by insertion into ``k`` sorted slots."""
    top = np.zeros(k, dtype=values.dtype)  # ascending: top[0] is the k-th largest so far
    for v in values:
        if v > top[0]:
            i = 1
            while i < k and top[i] < v:
                top[i - 1] = top[i]
                i += 1
            top[i - 1] = v
    return top[0]


@njit(cache=True, nogil=True)
def select_from_allowed_rows(scores, rows, deleted, k):  # pragma: no cover
    """Top ``k`` over ``rows`` (ascending: a filter's allowed rows); resets every score.

    Scanning only the allowed rows makes a selective filter cheaper than no filter at all.
    """
    heap_s = np.empty(k, dtype=np.float32)
    heap_r = np.empty(k, dtype=np.int64)
    size = 0
    bar = np.float32(0.0)
    for j in range(rows.size):
        d = rows[j]
        s = scores[d]
        if s > bar and not (deleted.size and deleted[d]):
            size = _offer(heap_s, heap_r, size, s, d)
            if size == k:
                bar = heap_s[0]
    scores[:] = 0.0
    return _sorted(heap_s, heap_r, size)


@njit(cache=True, nogil=True)
def search_segment(
    query_ptr,
    query_gids,
    indptrs,
    docs,
    weights,
    g2ls,
    field_weights,
    deleted,
    allowed,
    allowed_rows,
    k,
    first,
    last,
    scores,
    out_rows,
    out_values,
    out_count,
):  # pragma: no cover
    """Queries ``first..last-1`` over one segment: accumulate every field, select each query's top ``k``.

    Query q's global term ids are ``query_gids[query_ptr[q]:query_ptr[q + 1]]``. ``indptrs``, ``docs``,
    ``weights`` and ``g2ls`` hold one array per field (tuples), ``field_weights`` their weights, in the
    index's field order, so sums are added in the same order as one field at a time. ``allowed_rows``
    (ascending) are the filter's rows, or None without a filter. ``scores`` is the segment's
    all-zero buffer and is all zeros again on return. Query q's rows and scores go to ``out_rows[q]``
    and ``out_values[q]``, best first, and their number to ``out_count[q]``.
    """
    for q in range(first, last):
        gids = query_gids[query_ptr[q] : query_ptr[q + 1]]
        rows, values = search_query(
            gids, indptrs, docs, weights, g2ls, field_weights, deleted, allowed, allowed_rows, k, scores
        )
        count = rows.size
        out_rows[q, :count] = rows
        out_values[q, :count] = values
        out_count[q] = count


@njit(cache=True, nogil=True)
def search_query(
    gids, indptrs, docs, weights, g2ls, field_weights, deleted, allowed, allowed_rows, k, scores
):  # pragma: no cover
    """One query's top ``k`` rows and scores over one segment, best first (arguments: ``search_segment``)."""
    visited = 0
    for f in range(len(indptrs)):
        visited += accumulate(indptrs[f], docs[f], weights[f], g2ls[f], gids, field_weights[f], scores)
    if visited == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    # Any of the three selections gives the same rows; each is the cheapest in its case.
    if len(indptrs) == 1 and visited * 8 < scores.size:  # few postings: revisit them, not every row
        return select_from_postings(indptrs[0], docs[0], g2ls[0], gids, scores, deleted, allowed, k)
    if allowed_rows is not None:
        return select_from_allowed_rows(scores, allowed_rows, deleted, k)
    return select_from_rows(scores, deleted, allowed, k)


@njit(cache=True, inline="always")
def _admitted(d, deleted, allowed):  # pragma: no cover
    """May row ``d`` be a result? ``deleted`` and ``allowed`` are masks (length 0: no mask), checked
    before a row can enter the top k, never after."""
    return not (deleted.size and deleted[d]) and not (allowed.size and not allowed[d])


@njit(cache=True)
def _offer(heap_s, heap_r, size, s, d):  # pragma: no cover
    """Offer row ``d`` with (positive) score ``s`` to the bounded min-heap, worst of the best at the root.

    Ties go to the lower row.
    """
    k = heap_s.size
    if size < k:
        i = size
        size += 1
        while i > 0:  # sift up
            parent = (i - 1) // 2
            if _worse(s, d, heap_s[parent], heap_r[parent]):
                heap_s[i] = heap_s[parent]
                heap_r[i] = heap_r[parent]
                i = parent
            else:
                break
        heap_s[i] = s
        heap_r[i] = d
    elif _worse(heap_s[0], heap_r[0], s, d):
        i = 0
        while True:  # replace the root, sift down
            child = 2 * i + 1
            if child >= size:
                break
            if child + 1 < size and _worse(heap_s[child + 1], heap_r[child + 1], heap_s[child], heap_r[child]):
                child += 1
            if _worse(heap_s[child], heap_r[child], s, d):
                heap_s[i] = heap_s[child]
                heap_r[i] = heap_r[child]
                i = child
            else:
                break
        heap_s[i] = s
        heap_r[i] = d
    return size


@njit(cache=True)
def _sorted(heap_s, heap_r, size):  # pragma: no cover
    """The heap's rows and scores, best first (equal scores: lower row first), emptying the heap.

    Pops the worst row ``size`` times into the output from its end: no sort, no allocation but the output.
    """
    rows = np.empty(size, dtype=np.int64)
    values = np.empty(size, dtype=np.float32)
    for last in range(size - 1, -1, -1):
        rows[last], values[last] = heap_r[0], heap_s[0]
        s, d = heap_s[last], heap_r[last]  # the heap's last entry sifts down from the root
        i = 0
        while True:
            child = 2 * i + 1
            if child >= last:
                break
            if child + 1 < last and _worse(heap_s[child + 1], heap_r[child + 1], heap_s[child], heap_r[child]):
                child += 1
            if _worse(heap_s[child], heap_r[child], s, d):
                heap_s[i] = heap_s[child]
                heap_r[i] = heap_r[child]
                i = child
            else:
                break
        heap_s[i] = s
        heap_r[i] = d
    return rows, values


@njit(cache=True)
def _worse(s1, r1, s2, r2):  # pragma: no cover
    """Is (score s1, row r1) ranked below (s2, r2)? Higher score first, then lower row."""
    return s1 < s2 or (s1 == s2 and r1 > r2)
