"""BM25 search over the segments of one commit: accumulate posting weights, select the top k.

A row is a candidate when it contains a query term with positive weight and passes the filter and the
delete set; ties keep segment-then-row order. The inner loops are the compiled kernels of
``kernels.py``; each thread scores into its own per-segment buffers (``ScoreBuffers``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragline.index.kernels import accumulate, select_from_allowed_rows, select_from_postings, select_from_rows
from ragline.index.segment import Segment
from ragline.index.stats import NO_MASK, BM25Scorer


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
    vocab = scorer.stats.vocab
    gids = np.array([g for g in (vocab.get(t, -1) for t in terms) if g >= 0], dtype=np.int64)
    found_values, found_seg, found_rows = [], [], []
    one_field = len(fields) == 1
    # Masks first: a filter that fails must fail before any score lands in the shared buffers.
    masks = [seg.filter_mask(node) if node is not None else NO_MASK for seg in segments]
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
        if one_field and visited * 8 < len(seg):  # few postings: revisit them, not every row
            rows, values = select_from_postings(postings.indptr, postings.docs, g2l, gids, scores, deleted, allowed, k)
        elif node is not None:
            rows, values = select_from_allowed_rows(scores, seg.filter_rows(node), deleted, k)
        else:
            rows, values = select_from_rows(scores, deleted, NO_MASK, k)
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
