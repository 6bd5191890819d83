"""Dense search over the segments of one commit: the index's embedder, and nearest-neighbour search
with deletes and filters as masks inside each segment's ANN search (``vectors.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, IndexMismatchError
from ragline.index.exact_search import exact_top_k
from ragline.index.segment import FIELD_TEXT, Segment
from ragline.index.vectors import AllowedRows
from ragline.types import Document

KEPT_VECTOR_MASKS = 32  # (segment, filter) masks of live, allowed rows kept for vector search
# A segment of at most this many rows is searched exactly, by brute force over its mapped vectors: at this
# size that costs less than reading its graph (and, in a one-query process, importing faiss: ~60 ms), and
# the result is exact rather than approximate.
EXACT_SEGMENT_ROWS = 4096


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
        self._kept: dict[tuple[Any, ...], Any] = {}  # (form, segment, filter) -> allowed rows

    def clear(self) -> None:
        self._kept.clear()

    def allowed(self, si: int, segment: Segment, dead: np.ndarray, node: Any) -> AllowedRows | None:
        """Rows of segment number ``si`` that are not ``dead`` and pass ``node`` (None: every row)."""
        return self._kept_for(("faiss", si, node), lambda: _packed(segment, self.mask(si, segment, dead, node)))

    def mask(self, si: int, segment: Segment, dead: np.ndarray, node: Any) -> np.ndarray | None:
        """The same rows as a boolean mask (None: every row)."""
        return self._kept_for(("mask", si, node), lambda: _live_mask(segment, dead, node))

    def _kept_for(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        if key not in self._kept:
            value = make()
            if len(self._kept) >= KEPT_VECTOR_MASKS:
                self._kept.clear()  # a bound on memory: masks are cheap to build again
            self._kept[key] = value
        return self._kept[key]


def _live_mask(segment: Segment, dead: np.ndarray, node: Any) -> np.ndarray | None:
    mask = None if node is None else segment.filter_mask(node)
    if dead.any():
        mask = ~dead if mask is None else mask & ~dead
    return mask


def _packed(segment: Segment, mask: np.ndarray | None) -> AllowedRows | None:
    return None if mask is None else segment.ann.allow(mask)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))[:, np.newaxis]
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def exact_segment_search(
    segment: Segment, vector: np.ndarray, k: int, mask: np.ndarray | None, metric: str
) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` rows of a small segment by brute force over its stored vectors, as ``VectorIndex.search``
    scores them (cosine: both sides unit length; zero vectors score 0)."""
    vectors = np.asarray(segment.vectors, dtype=np.float32)
    if vector.shape != (vectors.shape[1],):
        raise ConfigError(
            f"the query vector has shape {vector.shape} but this index holds {vectors.shape[1]}-dimensional "
            "vectors; embed with the model the index was built with"
        )
    if not np.isfinite(vector).all():
        raise ConfigError("the query vector contains NaN or infinite values")
    query = vector.astype(np.float32)[np.newaxis, :]
    if metric == "cosine":
        query, vectors = _unit_rows(query), _unit_rows(vectors)
    rows = np.arange(len(vectors), dtype=np.int64) if mask is None else np.flatnonzero(mask)
    return exact_top_k(query, min(k, len(rows)), rows, vectors.__getitem__)  # sized by the rows, not by ``k``


def search_vector(
    segments: Sequence[Segment],
    deleted: Sequence[np.ndarray],
    vector: np.ndarray,
    k: int,
    node: Any,
    masks: VectorMasks,
) -> list[tuple[int, int, float]]:
    """(segment, row, score) of the ``k`` nearest live rows to ``vector`` passing filter ``node``.

    Each segment is asked for at most its live rows: a ``k`` beyond the collection sizes nothing.
    """
    if k <= 0:
        return []
    found: list[tuple[int, int, float]] = []
    for si, seg in enumerate(segments):
        if seg.vectors is None:
            continue
        want = min(k, len(seg) - int(deleted[si].sum()))
        if want <= 0:
            continue
        if len(seg) <= EXACT_SEGMENT_ROWS:
            mask = masks.mask(si, seg, deleted[si], node)
            scores, rows = exact_segment_search(seg, vector, want, mask, seg.vector_metric)
        else:
            scores, rows = seg.ann.search(vector[np.newaxis, :], want, masks.allowed(si, seg, deleted[si], node))
        found.extend((si, int(r), float(sc)) for sc, r in zip(scores[0], rows[0]) if r >= 0)
    found.sort(key=lambda hit: -hit[2])
    return found[:k]
