"""Where live documents are: document id -> (segment number, row).

A commit needs the rows of the documents it replaces or deletes, usually a few among millions:
``find_live`` finds just those. ``live_id_map`` is the whole map, for callers that walk every id
(sync, pruning, explain); it is built segment by segment in C loops.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat

import numpy as np

from ragline.index.segment import Segment


def live_id_map(segments: Sequence[Segment], deleted: Sequence[np.ndarray]) -> dict[str, tuple[int, int]]:
    """Every live id -> (segment number, row), in segment-then-row order."""
    live: dict[str, tuple[int, int]] = {}
    for si, (seg, dead) in enumerate(zip(segments, deleted)):
        if dead.any():
            rows: Sequence[int] = np.flatnonzero(~dead).tolist()
            ids: Sequence[str] = [seg.ids[row] for row in rows]
        else:
            rows, ids = range(len(seg)), seg.ids
        live.update(zip(ids, zip(repeat(si), rows)))
    return live


def find_live(
    segments: Sequence[Segment], deleted: Sequence[np.ndarray], doc_ids: Iterable[str]
) -> dict[str, tuple[int, int]]:
    """(segment number, row) of each of ``doc_ids`` that is live; ids that are not are left out.

    Each segment's ids are tested against the wanted set in C (``isdisjoint``), and only a segment that
    holds one is walked: no id -> row map of the whole index is built (a second copy of every id) for
    the few documents a small commit replaces.
    """
    wanted, found = set(doc_ids), {}
    for si in range(len(segments) - 1, -1, -1):  # newest first: updates tend to touch recent documents
        ids, dead = segments[si].ids, deleted[si]
        if not wanted or wanted.isdisjoint(ids):
            continue
        for row, doc_id in enumerate(ids):
            if doc_id in wanted and not dead[row]:  # a live id has one live row in the whole index
                found[doc_id] = (si, row)
        wanted.difference_update(found)
    return found
