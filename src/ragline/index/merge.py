"""Merging segments: the live rows of several segments rewritten as one, postings merged directly.

No text is analyzed again: each field's postings are renumbered (terms into one vocabulary, rows past
the deleted ones) and concatenated; vectors are copied and a new ANN index built over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from ragline.index.segment import FieldPostings, Segment, build_vector_index
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
    ids, hashes, sources, metadata = [], [], [], []
    for seg, live in parts:
        for row in np.flatnonzero(live).tolist():
            stored.append((seg, row))
            ids.append(seg.ids[row])
            hashes.append(seg.hashes[row])
            sources.append(seg.sources[row])
            metadata.append(seg.metadata[row])
    fields = {}
    for fname in parts[0][0].fields:
        vocab: dict[str, int] = {}
        term_parts, row_parts, tf_parts, lengths = [], [], [], []
        offset = 0
        for seg, live in parts:
            p: FieldPostings = seg.fields[fname]
            local_to_new = np.array([vocab.setdefault(t, len(vocab)) for t in p.terms], dtype=np.int64)
            new_row = np.cumsum(live) - 1 + offset  # old row -> new row (valid where live)
            owner = np.repeat(np.arange(len(p.terms)), np.diff(p.indptr))
            keep = live[p.docs]
            term_parts.append(local_to_new[owner[keep]])
            row_parts.append(new_row[p.docs[keep]])
            tf_parts.append(np.asarray(p.tfs)[keep])
            lengths.append(np.asarray(p.lengths)[live])
            offset += int(live.sum())
        terms, rows, tfs = (np.concatenate(x) for x in (term_parts, row_parts, tf_parts))
        order = np.lexsort((rows, terms))
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(vocab)), out=indptr[1:])
        fields[fname] = FieldPostings(
            list(vocab), indptr, rows[order].astype(np.int32), tfs[order].astype(np.float32), np.concatenate(lengths)
        )
    vectors = ann = None
    if parts[0][0].vectors is not None:
        vectors = np.concatenate([np.asarray(seg.vectors)[live] for seg, live in parts])
        ann = build_vector_index(vectors, vector_index)
    documents = StoredRows(stored)
    return Segment(name, ids, hashes, sources, fields, documents, vectors=vectors, ann=ann, metadata=metadata)
