"""Merging segments: the live rows of several segments rewritten as one, postings merged directly.

No text is analyzed again: each field's postings are renumbered (terms into one vocabulary, rows past
the deleted ones) and concatenated; vectors are copied and a new ANN index built over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Any, overload

import numpy as np

from ragline.index.postings import FieldPostings, number_terms
from ragline.index.segment import Segment, build_vector_index
from ragline.types import Document


def segments_to_merge(
    segments: list[Segment], deleted: list[np.ndarray], max_segments: int, expunge_deletes: bool
) -> tuple[list[int], list[int]]:
    """(segments to rewrite into one, segments with no live row to drop), by number.

    The smallest segments are chosen until at most ``max_segments`` remain; with ``expunge_deletes``
    every segment with deleted rows too.
    """
    live_counts = [len(s) - int(d.sum()) for s, d in zip(segments, deleted)]
    empties = [i for i, n in enumerate(live_counts) if n == 0]
    order = sorted((i for i in range(len(segments)) if live_counts[i]), key=lambda i: live_counts[i])
    n_merge = max(0, len(order) - max(max_segments, 1) + 1) if len(order) > max_segments else 0
    chosen = set(order[:n_merge]) if n_merge >= 2 else set()
    if expunge_deletes:
        chosen |= {i for i in order if deleted[i].any()}
    return sorted(chosen), empties


def merged_commit(
    segments: list[Segment],
    deleted: list[np.ndarray],
    chosen: list[int],
    empties: list[int],
    name: str,
    vector_index: str,
) -> tuple[list[int], list[Segment], list[np.ndarray]]:
    """(numbers of the segments kept as they are, the segments, their delete sets) after rewriting the
    ``chosen`` segments into one named ``name`` (last) and dropping the ``empties``."""
    keep = [i for i in range(len(segments)) if i not in chosen and i not in empties]
    new_segments, new_deleted = [segments[i] for i in keep], [deleted[i] for i in keep]
    if chosen:
        merged = merge_segments(name, [(segments[i], ~deleted[i]) for i in chosen], vector_index)
        new_segments.append(merged)
        new_deleted.append(np.zeros(len(merged), dtype=bool))
    return keep, new_segments, new_deleted


class StoredRows(Sequence[Document]):
    """The documents of (segment, row) pairs, read from their segment when asked for: a merged segment
    is written one document at a time, so the merged text is never all in memory at once."""

    def __init__(self, rows: list[tuple[Segment, int]]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> Document: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Document]: ...
    def __getitem__(self, index: int | slice) -> Document | Sequence[Document]:
        if isinstance(index, slice):
            return StoredRows(self.rows[index])
        seg, row = self.rows[index]
        return seg.document(row)


def merge_segments(name: str, parts: list[tuple[Segment, np.ndarray]], vector_index: str) -> Segment:
    """One segment holding the live rows of ``parts`` (segment, live mask), in order."""
    stored: list[tuple[Segment, int]] = []
    ids: list[str] = []
    hashes: list[str] = []
    sources: list[str | None] = []
    metadata: list[dict[str, Any]] = []
    for seg, live in parts:
        rows = np.flatnonzero(live).tolist()
        stored.extend(zip(repeat(seg), rows))
        for merged, column in ((ids, seg.ids), (hashes, seg.hashes), (sources, seg.sources), (metadata, seg.metadata)):
            merged.extend(column if len(rows) == len(column) else map(column.__getitem__, rows))
    fields = {fname: merge_postings([(seg.fields[fname], live) for seg, live in parts]) for fname in parts[0][0].fields}
    vectors = ann = None
    if parts[0][0].vectors is not None:
        vectors = np.concatenate([np.asarray(seg.vectors)[live] for seg, live in parts])
        ann = build_vector_index(vectors, vector_index)
    documents = StoredRows(stored)
    return Segment(name, ids, hashes, sources, fields, documents, vectors=vectors, ann=ann, metadata=metadata)


def merge_postings(parts: list[tuple[FieldPostings, np.ndarray]]) -> FieldPostings:
    """The postings of the live rows of ``parts`` (postings, live mask), renumbered in order.

    Each kept posting is copied straight to its place in the merged arrays (the merged counts per term
    are summed first), so beyond the result only one part's temporary arrays exist at a time. Within a
    term, parts come in order and each part's rows ascend, so the merged rows ascend too.
    """
    vocab: dict[str, int] = {}
    to_new = [number_terms(vocab, p.terms) for p, _ in parts]
    kept_counts = []  # per part: kept postings of each of its terms
    total = np.zeros(len(vocab), dtype=np.int64)
    for (p, live), new_ids in zip(parts, to_new):
        if live.all():
            counts = np.diff(p.indptr)
        else:
            kept_before = np.zeros(len(p.docs) + 1, dtype=np.int64)
            np.cumsum(live[p.docs], out=kept_before[1:])
            counts = kept_before[p.indptr[1:]] - kept_before[p.indptr[:-1]]
        kept_counts.append(counts)
        total[new_ids] += counts  # a part's terms are distinct: no index repeats
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(total, out=indptr[1:])
    docs = np.empty(int(indptr[-1]), dtype=np.int32)
    tfs = np.empty(int(indptr[-1]), dtype=np.float32)
    filled = indptr[:-1].copy()  # next free place of each merged term
    offset = 0
    for (p, live), new_ids, counts in zip(parts, to_new, kept_counts):
        new_row = (np.cumsum(live, dtype=np.int64) - 1 + offset).astype(np.int32)  # valid where live
        kept = slice(None) if live.all() else np.flatnonzero(live[p.docs])
        owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)  # local term of each kept posting
        first = np.zeros(len(counts), dtype=np.int64)
        np.cumsum(counts[:-1], out=first[1:])
        places = filled[new_ids][owner] + (np.arange(len(owner), dtype=np.int64) - first[owner])
        del owner, first
        docs[places] = new_row[np.asarray(p.docs)[kept]]
        tfs[places] = np.asarray(p.tfs)[kept]
        del places
        filled[new_ids] += counts
        offset += int(live.sum())
    lengths = np.concatenate([np.asarray(p.lengths, dtype=np.float32)[live] for p, live in parts])
    return FieldPostings(list(vocab), indptr, docs, tfs, lengths)
