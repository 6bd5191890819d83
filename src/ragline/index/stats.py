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
from ragline.index.postings import number_terms
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

    totals: dict[str, float]  # per field: the summed length of live rows (float64: exact for integer counts)
    segments: tuple[Segment, ...]  # the segments these statistics are of, to update them from

    @classmethod
    def compute(
        cls,
        segments: Sequence[Segment],
        deleted: Sequence[np.ndarray],
        fields: Mapping[str, float],
        previous: CollectionStats | None = None,
    ) -> CollectionStats:
        """The statistics of ``segments``; from ``previous`` (an earlier commit's) where that is the same.

        After a commit that only added segments and deleted rows, the segments ``previous`` was computed
        for come first, unchanged: only the new segments' terms and the newly deleted rows are counted,
        and the result equals a computation from scratch (the same global term ids, counts and sums).
        """
        if previous is not None and extends(previous, segments, fields):
            return cls._update(previous, segments, deleted, fields)
        vocab: dict[str, int] = {}
        l2g = [{f: number_terms(vocab, p.terms) for f, p in seg.fields.items()} for seg in segments]
        g2l = [_global_to_local(seg_l2g, len(vocab)) for seg_l2g in l2g]
        df = {f: np.zeros(len(vocab), dtype=np.int64) for f in fields}
        total = dict.fromkeys(fields, 0.0)
        n_live = sum(_add_live(seg, dead, seg_l2g, df, total) for seg, dead, seg_l2g in zip(segments, deleted, l2g))
        avg = {f: total[f] / n_live if n_live else 0.0 for f in fields}
        masks = [d if d.any() else NO_MASK for d in deleted]
        return cls(vocab, l2g, g2l, df, avg, n_live, masks, total, tuple(segments))

    @classmethod
    def _update(
        cls,
        previous: CollectionStats,
        segments: Sequence[Segment],
        deleted: Sequence[np.ndarray],
        fields: Mapping[str, float],
    ) -> CollectionStats:
        """``compute`` for ``previous``'s segments plus new ones (see ``compute``)."""
        kept = len(previous.segments)
        vocab, l2g, g2l, df = _numbered(previous, range(kept), segments[kept:])
        total, n_live = dict(previous.totals), previous.n
        for si, seg in enumerate(segments[:kept]):  # rows deleted since: their terms and lengths leave
            was = previous.deleted[si] if previous.deleted[si].size else np.zeros(len(seg), dtype=bool)
            gone = np.flatnonzero(deleted[si] & ~was)
            if not gone.size:
                continue
            n_live -= gone.size
            removed = np.zeros(len(seg), dtype=bool)
            removed[gone] = True
            for f, postings in seg.fields.items():
                at = np.flatnonzero(removed[postings.docs])  # postings of the removed rows
                terms = np.searchsorted(postings.indptr, at, side="right") - 1
                df[f][l2g[si][f]] -= np.bincount(terms, minlength=len(postings.terms))  # distinct terms
                total[f] -= float(postings.lengths[gone].sum(dtype=np.float64))
        for seg, dead, seg_l2g in zip(segments[kept:], deleted[kept:], l2g[kept:]):
            n_live += _add_live(seg, dead, seg_l2g, df, total)
        avg = {f: total[f] / n_live if n_live else 0.0 for f in fields}
        masks = [d if d.any() else NO_MASK for d in deleted]
        return cls(vocab, l2g, g2l, df, avg, n_live, masks, total, tuple(segments))

    @classmethod
    def after_merge(
        cls, previous: CollectionStats, kept: Sequence[int], segments: Sequence[Segment], deleted: Sequence[np.ndarray]
    ) -> CollectionStats:
        """The statistics after a merge of ``previous``'s commit, without counting the collection again.

        ``segments`` are ``previous``'s segments numbered ``kept``, then the merged ones. A merge moves the
        live rows of the segments it rewrites and drops the rest (deleted rows, empty segments), so N,
        df and the length totals stay; only the merged segment's terms are numbered, and they were all in
        the vocabulary already. Global term ids differ from a computation from scratch, every count of
        every term is the same, and so is every score.
        """
        vocab, l2g, g2l, df = _numbered(previous, kept, segments[len(kept) :])
        masks = [d if d.any() else NO_MASK for d in deleted]
        return cls(vocab, l2g, g2l, df, dict(previous.avg), previous.n, masks, dict(previous.totals), tuple(segments))


def _numbered(
    previous: CollectionStats, kept: Sequence[int], new: Sequence[Segment]
) -> tuple[dict[str, int], list[dict[str, np.ndarray]], list[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """(vocabulary, l2g, g2l, df) of ``previous``'s segments numbered ``kept`` followed by ``new`` segments:
    the kept segments' term maps are reused, the new ones' terms numbered (new terms last), and df holds
    ``previous``'s counts (zero for new terms); the caller counts the new segments' live rows."""
    vocab = dict(previous.vocab)  # a copy: searches on the previous commit still read the old one
    l2g = [previous.l2g[i] for i in kept]
    l2g.extend({f: number_terms(vocab, p.terms) for f, p in seg.fields.items()} for seg in new)
    grown = len(vocab) - len(previous.vocab)
    g2l = [
        {f: np.concatenate([m, np.full(grown, -1, np.int32)]) if grown else m for f, m in previous.g2l[i].items()}
        for i in kept
    ]
    g2l.extend(_global_to_local(seg_l2g, len(vocab)) for seg_l2g in l2g[len(kept) :])
    df = {f: np.concatenate([counts, np.zeros(grown, np.int64)]) for f, counts in previous.df.items()}
    return vocab, l2g, g2l, df


def _global_to_local(seg_l2g: Mapping[str, np.ndarray], n_vocab: int) -> dict[str, np.ndarray]:
    """Per field: global term id -> the segment's local term id (-1 where the segment lacks the term)."""
    maps = {}
    for f, ids in seg_l2g.items():
        maps[f] = np.full(n_vocab, -1, dtype=np.int32)
        maps[f][ids] = np.arange(len(ids), dtype=np.int32)
    return maps


def _add_live(
    seg: Segment,
    dead: np.ndarray,
    seg_l2g: Mapping[str, np.ndarray],
    df: dict[str, np.ndarray],
    total: dict[str, float],
) -> int:
    """Add a segment's live rows to the document frequencies and length totals; its live row count."""
    live = ~dead if dead.any() else None
    for f, postings in seg.fields.items():
        df[f][seg_l2g[f]] += postings.live_df(live)  # a segment's terms are distinct: no index repeats
        # float64: a float32 sum is inexact past 2**24 tokens, and batched builds must score as one segment
        lengths = postings.lengths if live is None else postings.lengths[live]
        total[f] += float(lengths.sum(dtype=np.float64))
    return len(seg) - int(dead.sum())


def extends(previous: CollectionStats, segments: Sequence[Segment], fields: Mapping[str, float]) -> bool:
    """Are ``previous``'s segments, the same objects, the first of ``segments`` (for the same fields)?"""
    kept = len(previous.segments)
    return (
        set(previous.df) == set(fields)
        and len(segments) >= kept
        and all(a is b for a, b in zip(previous.segments, segments[:kept]))
    )


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
