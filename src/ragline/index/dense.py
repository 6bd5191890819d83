"""Dense search over the segments of one commit: the index's embedder, and nearest-neighbour search
with deletes and filters as masks inside each segment's ANN search (``vectors.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, IndexMismatchError
from ragline.index.segment import FIELD_TEXT, Segment
from ragline.index.vectors import AllowedRows
from ragline.types import Document

KEPT_VECTOR_MASKS = 32  # (segment, filter) masks of live, allowed rows kept for vector search


def load_index_embedder(name: str | None, stamp: dict[str, Any] | None, path: Path | None) -> Any:
    """The embedder ``name`` wrapped in the on-disk embedding cache, checked against the manifest's ``stamp``."""
    if not name:
        raise ConfigError("this index has no embeddings; create it with an embedder (ragline index --embedder minilm)")
    from ragline.models import CachedEmbedder, load_embedder  # loads torch: only when an embedder is needed

    embedder = CachedEmbedder(load_embedder(name))
    if stamp and stamp["id"] != embedder.id:
        raise IndexMismatchError(
            f"index {path} was embedded with {stamp['id']}, but {name!r} now "
            f"loads {embedder.id}; reinstall that model or rebuild the index"
        )
    return embedder


def embedder_stamp(name: str | None, embedder: Any) -> dict[str, Any]:
    """What the manifest records of the embedder a commit's vectors came from."""
    return {"name": name, "id": embedder.id, "sha256": embedder.embedder.weights_sha256, "dim": embedder.dim}


def vectors_for(
    documents: list[Document], given: dict[str, np.ndarray], embed: Callable[[list[str]], np.ndarray]
) -> np.ndarray:
    """One vector per document: the one ``given`` for its id, else ``embed`` of its indexed text."""
    missing = [d for d in documents if d.id not in given]
    embedded = embed([FIELD_TEXT["body"](d) for d in missing]) if missing else None
    by_id = dict(zip((d.id for d in missing), embedded)) if embedded is not None else {}
    return np.stack([given.get(d.id, by_id.get(d.id)) for d in documents]).astype(np.float32)


class VectorMasks:
    """The rows of each segment a vector search may return, per filter: live and passing it.

    Prepared for faiss once (``VectorIndex.allow``) and kept until the commit changes (``clear``), so
    the queries that share a filter do not rebuild and pack it (at 1M rows ~150 us a query otherwise).
    """

    def __init__(self) -> None:
        self._kept: dict[tuple[int, Any], AllowedRows | None] = {}  # (segment, filter) -> allowed rows

    def clear(self) -> None:
        self._kept.clear()

    def allowed(self, si: int, segment: Segment, dead: np.ndarray, node: Any) -> AllowedRows | None:
        """Rows of segment number ``si`` that are not ``dead`` and pass ``node`` (None: every row)."""
        key = (si, node)
        if key in self._kept:
            return self._kept[key]
        mask = None if node is None else segment.filter_mask(node)
        if dead.any():
            mask = ~dead if mask is None else mask & ~dead
        allowed = None if mask is None else segment.ann.allow(mask)
        if len(self._kept) >= KEPT_VECTOR_MASKS:
            self._kept.clear()  # a bound on memory: masks are cheap to build again
        self._kept[key] = allowed
        return allowed


def search_vector(
    segments: Sequence[Segment],
    deleted: Sequence[np.ndarray],
    vector: np.ndarray,
    k: int,
    node: Any,
    masks: VectorMasks,
) -> list[tuple[int, int, float]]:
    """(segment, row, score) of the ``k`` nearest live rows to ``vector`` passing filter ``node``."""
    if k <= 0:
        return []
    found: list[tuple[int, int, float]] = []
    for si, seg in enumerate(segments):
        if seg.ann is None:
            continue
        scores, rows = seg.ann.search(vector[np.newaxis, :], k, masks.allowed(si, seg, deleted[si], node))
        found.extend((si, int(r), float(sc)) for sc, r in zip(scores[0], rows[0]) if r >= 0)
    found.sort(key=lambda hit: -hit[2])
    return found[:k]
