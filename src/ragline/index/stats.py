"""Collection statistics of one commit and the BM25 weights of every posting under given parameters.

Statistics (N, df, average length per field) are summed over the live rows of all segments, so scores
equal those of a fresh build of the live documents. Terms get global ids across segments; each segment
maps them to its local term ids. Both objects are built once per commit (the index caches them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragline.index.bm25 import BM25Params, absent_weight, idf, tf_weight
from ragline.index.segment import Segment

NO_MASK = np.zeros(0, dtype=np.bool_)  # an empty mask: the search kernels skip the check


@dataclass(frozen=True)
class CollectionStats:
    """Global vocabulary, live document frequency and average length per field of one commit."""

    vocab: dict[str, int]  # term -> global term id
    l2g: list[dict[str, np.ndarray]]  # per segment and field: local term id -> global term id
    g2l: list[dict[str, np.ndarray]]  # per segment and field: global term id -> local term id (-1: absent)
    df: dict[str, np.ndarray]  # per field: live documents holding each global term
    avg: dict[str, float]  # per field: average length over live rows
    n: int  # live documents
    deleted: list[np.ndarray]  # per segment: True = deleted row (NO_MASK when none is)

    @classmethod
    def compute(
        cls, segments: Sequence[Segment], deleted: Sequence[np.ndarray], fields: Mapping[str, float]
    ) -> CollectionStats:
        vocab: dict[str, int] = {}
        l2g = [
            {
                f: np.array([vocab.setdefault(t, len(vocab)) for t in p.terms], dtype=np.int64)
                for f, p in seg.fields.items()
            }
            for seg in segments
        ]
        g2l = []
        for seg_l2g in l2g:
            maps = {}
            for f, ids in seg_l2g.items():
                maps[f] = np.full(len(vocab), -1, dtype=np.int32)
                maps[f][ids] = np.arange(len(ids), dtype=np.int32)
            g2l.append(maps)
        n_live = sum(len(s) - int(d.sum()) for s, d in zip(segments, deleted))
        df = {f: np.zeros(len(vocab), dtype=np.int64) for f in fields}
        total = dict.fromkeys(fields, 0.0)
        for seg, dead, seg_l2g in zip(segments, deleted, l2g):
            live = ~dead if dead.any() else None
            for f, postings in seg.fields.items():
                np.add.at(df[f], seg_l2g[f], postings.live_df(live))
                # float64: a float32 sum is inexact past 2**24 tokens, and batched builds must score as one segment
                lengths = postings.lengths if live is None else postings.lengths[live]
                total[f] += float(lengths.sum(dtype=np.float64))
        avg = {f: total[f] / n_live if n_live else 0.0 for f in fields}
        masks = [d if d.any() else NO_MASK for d in deleted]
        return cls(vocab, l2g, g2l, df, avg, n_live, masks)


@dataclass(frozen=True)
class BM25Scorer:
    """IDF per field and the weight of every posting (times its term's IDF) under ``params``."""

    stats: CollectionStats
    params: BM25Params
    idf: dict[str, np.ndarray]  # per field: IDF of each global term
    weights: list[dict[str, np.ndarray]]  # per segment and field: one float32 weight per posting
    absent: Callable[[np.ndarray], float]  # the score every matching document earns for global term ids
    plans: dict[Any, Any] = field(default_factory=dict, compare=False)  # sparse.py's kernel arguments per filter

    @classmethod
    def build(
        cls, stats: CollectionStats, segments: Sequence[Segment], fields: Mapping[str, float], params: BM25Params
    ) -> BM25Scorer:
        idfs = {f: idf(params, stats.df[f], stats.n) for f in fields}
        # Each posting's weight times its term's IDF: the search kernel then only adds.
        weights = [
            {
                f: (
                    tf_weight(params, p.tfs, p.lengths[p.docs], stats.avg[f])
                    * np.repeat(idfs[f][l2g[f]], np.diff(p.indptr))
                ).astype(np.float32)
                for f, p in seg.fields.items()
            }
            for seg, l2g in zip(segments, stats.l2g)
        ]
        absent = absent_weight(params)

        def absent_score(gids: np.ndarray) -> float:
            # bm25l / bm25+: every matching document also earns idf * weight(0) for each query term.
            return sum(w * absent * float(idfs[f][gids].sum()) for f, w in fields.items()) if absent else 0.0

        return cls(stats, params, idfs, weights, absent_score)

    def __getitem__(self, key: str) -> Any:
        """The scorer's and its statistics' fields by name (``scorer["df"]``), as readers by key expect."""
        return getattr(self, key) if key in ("idf", "weights", "absent") else getattr(self.stats, key)
