"""Dense vector index over faiss-cpu: float32 vectors for rows 0..n-1, searched by inner product.

Rows are positions in insertion order; mapping rows to documents is the caller's job. With
``metric="cosine"`` every vector is L2-normalized on add and every query on search, so the inner
product is the cosine (zero vectors stay zero and score 0 against everything); ``"ip"`` keeps raw
inner products. Kinds (Johnson, Douze & Jégou, "Billion-scale similarity search with GPUs", 2017):

* ``flat``  exact, brute force.
* ``hnsw``  graph search (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search
  using Hierarchical Navigable Small World graphs", TPAMI 2018); ``m``, ``ef_construction``, ``ef_search``.
* ``ivf``   inverted file over ``nlist`` k-means cells, ``nprobe`` of them visited per query.
* ``ivfpq`` the same with product-quantized residuals (Jégou, Douze & Schmid, "Product quantization for
  nearest neighbor search", TPAMI 2011): ``pq_m`` sub-vectors of ``pq_bits`` bits each.

IVF kinds are trained by their first :meth:`VectorIndex.add` (use :meth:`VectorIndex.build` with the
whole collection). faiss's k-means wants at least 39 points per centroid; with fewer training vectors
than ``39 * nlist`` (or ``39 * 2**pq_bits`` for the PQ codebooks) the index falls back to ``flat`` with a
logged warning, which at that size is fast anyway. ``stats["effective_kind"]`` says which one is in use.

Deletes and filters are a boolean ``allowed`` mask over rows (faiss HNSW has no ``remove_ids``, so a
deleted row is a tombstone: False in every mask). The mask goes into the search as a faiss
``IDSelectorBitmap``, so it applies before the top k, not after. Graph and IVF searches run short of
results when few rows are allowed, so below ``exact_search_below`` selectivity the allowed rows are
searched exactly, and any query the approximate search leaves short of ``min(k, allowed)`` results is
redone exactly: a search never returns fewer results than it could.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import mmap
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, CorruptIndexError, IndexMismatchError
from ragline.fsutil import fsync_directory, fsync_file
from ragline.index.exact_search import exact_top_k, top_k
from ragline.index.vector_config import (
    EXACT_SEARCH_BELOW,
    IVF_KINDS,
    KINDS,
    METRICS,
    MIN_POINTS_PER_CENTROID,
    VectorIndexConfig,
    as_config,
    require_int,
)
from ragline.lazy import lazy_module

# Loaded at the first faiss call: a BM25-only search opens an index without paying for faiss, and runs
# without it (faiss-cpu comes with the `dense` extra).
faiss = lazy_module("faiss", install="vector search needs faiss-cpu: pip install 'ragline[dense]'")


__all__ = [
    "EXACT_SEARCH_BELOW",
    "IVF_KINDS",
    "KINDS",
    "METRICS",
    "MIN_POINTS_PER_CENTROID",
    "AllowedRows",
    "VectorIndex",
    "VectorIndexConfig",
    "omp_threads",
]


@contextlib.contextmanager
def omp_threads(threads: int | None) -> Iterator[None]:
    """Run faiss with ``threads`` OpenMP threads, then restore the previous setting.

    OpenMP's thread count belongs to the calling thread, so this touches no other Python thread's faiss
    calls; with ``None`` it changes nothing.
    """
    if threads is None:
        yield
        return
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


def _reader(mapped: mmap.mmap) -> Callable[[int], bytes]:
    """A read callback over ``mapped`` from its start, for ``faiss.PyCallbackIOReader``."""
    position = 0

    def read(size: int) -> bytes:
        nonlocal position
        chunk = mapped[position : position + size]
        position += len(chunk)
        return chunk

    return read


def _default_pq_m(dim: int) -> int:
    target = max(1, dim // 4)
    return max(m for m in range(1, target + 1) if dim % m == 0)


def _kind_of(index: faiss.Index) -> str:
    # IndexIVFPQ is an IndexIVF, so test the specific class first.
    for kind, cls in (("hnsw", faiss.IndexHNSW), ("ivfpq", faiss.IndexIVFPQ), ("ivf", faiss.IndexIVFFlat)):
        if isinstance(index, cls):
            return kind
    if isinstance(index, faiss.IndexFlat):
        return "flat"
    raise IndexMismatchError(f"unsupported faiss index type {type(index).__name__}")


@dataclass(slots=True)
class AllowedRows:
    """An ``allowed`` mask prepared for faiss by :meth:`VectorIndex.allow`: checked, counted and packed
    once, so that the queries sharing a filter do not redo it (~80 us a query at 1M rows)."""

    mask: np.ndarray
    count: int
    bitmap: np.ndarray
    params: dict[tuple[int, VectorIndexConfig], faiss.SearchParameters] = field(default_factory=dict)


class VectorIndex:
    """float32 vectors of one dimension for rows 0..n-1; see the module docstring."""

    def __init__(self, dim: int, config: VectorIndexConfig | str | None = None) -> None:
        require_int("dimension", dim, minimum=1)
        self._dim = dim
        self._config = as_config(config)
        if self._config.kind == "ivfpq" and self._config.pq_m is not None and dim % self._config.pq_m:
            raise ConfigError(f"ivfpq pq_m={self._config.pq_m} must divide the dimension {dim}")
        self._kind = self._config.kind
        self._params_cache: dict[int, faiss.SearchParameters] = {}  # unfiltered search parameters per k
        # IVF kinds are created by train(): the default nlist depends on the training set's size.
        self._index: faiss.Index | None = None if self._kind in IVF_KINDS else self._new_index(0)

    @classmethod
    def build(cls, vectors: np.ndarray, config: VectorIndexConfig | str | None = None) -> VectorIndex:
        """An index of ``vectors`` (n, d), IVF kinds trained on all of them."""
        array = np.asarray(vectors)
        if array.ndim != 2:
            raise ConfigError(f"vectors must be a 2-D array (n, dim), got shape {array.shape}")
        index = cls(array.shape[1], config)
        index.add(array)
        return index

    # -- building -----------------------------------------------------------------------------------

    def _new_index(self, n_train: int) -> faiss.Index:
        c, d, ip = self._config, self._dim, faiss.METRIC_INNER_PRODUCT
        if self._kind == "flat":
            return faiss.IndexFlatIP(d)
        if self._kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, c.m, ip)
            index.hnsw.efConstruction = c.ef_construction
            return index
        nlist = c.nlist or max(1, round(4 * math.sqrt(n_train)))
        quantizer = faiss.IndexFlatIP(d)  # the faiss Python wrapper keeps it alive with the index
        if self._kind == "ivf":
            index = faiss.IndexIVFFlat(quantizer, d, nlist, ip)
        else:
            index = faiss.IndexIVFPQ(quantizer, d, nlist, c.pq_m or _default_pq_m(d), c.pq_bits, ip)
        index.make_direct_map()  # row -> vector lookups, for exact search over allowed rows
        return index

    def _too_few_to_train(self, n: int) -> str | None:
        nlist = self._config.nlist or max(1, round(4 * math.sqrt(n)))
        if n < MIN_POINTS_PER_CENTROID * nlist:
            return f"{n} vectors are too few for nlist={nlist} (faiss wants {MIN_POINTS_PER_CENTROID}/cell)"
        codebook = 2**self._config.pq_bits
        if self._kind == "ivfpq" and n < MIN_POINTS_PER_CENTROID * codebook:
            return f"{n} vectors are too few for pq_bits={self._config.pq_bits} ({codebook} centroids)"
        return None

    def train(self, vectors: np.ndarray) -> None:
        """Train an IVF kind on ``vectors`` (falling back to flat if too few); a no-op for other kinds."""
        if self._index is not None:
            if self._kind in IVF_KINDS:
                raise ConfigError("this vector index is already trained; build a new one to retrain")
            return
        x = self._prepare(vectors, "training vectors")
        reason = self._too_few_to_train(len(x))
        if reason is not None:
            import logging  # here, like tempfile below: a BM25 search loads this module and needs neither

            logging.getLogger(__name__).warning("%s index falls back to exact flat search: %s", self._kind, reason)
            self._kind = "flat"
            self._index = self._new_index(0)
            return
        index = self._new_index(len(x))
        with omp_threads(self._config.threads):
            index.train(x)
        self._index = index
        self._params_cache.clear()

    def add(self, vectors: np.ndarray) -> None:
        """Append ``vectors`` (n, d) as the next rows; an untrained IVF index first trains on them."""
        x = self._prepare(vectors, "vectors")
        if len(x) == 0:
            return
        if self._index is None:
            self.train(x)
        with omp_threads(self._config.threads):
            self._index.add(x)

    def _prepare(self, vectors: np.ndarray, what: str, allow_1d: bool = False) -> np.ndarray:
        """C-contiguous float32 (n, d), checked, and normalized for cosine."""
        x = np.asarray(vectors, dtype=np.float32)
        if allow_1d and x.ndim == 1:
            x = x[np.newaxis, :]
        if x.ndim != 2:
            raise ConfigError(f"{what} must be a 2-D array (n, dim), got shape {x.shape}")
        if x.shape[1] != self._dim:
            raise ConfigError(
                f"{what} have dimension {x.shape[1]} but this index holds {self._dim}-dimensional vectors; "
                "embed with the model the index was built with"
            )
        if self._config.metric == "cosine":
            if len(x) == 1:  # one query: the common case, kept to a few scalar operations
                norm = np.sqrt(np.dot(x[0], x[0]))  # float32, as the batch path computes it
                if not math.isfinite(norm):  # a NaN or an infinity anywhere makes the norm non-finite
                    raise ConfigError(f"{what} contain NaN or infinite values")
                return np.ascontiguousarray(x / norm) if norm > 0 else np.zeros_like(x, order="C")
            norms = np.sqrt(np.einsum("ij,ij->i", x, x))[:, np.newaxis]
            if not np.isfinite(norms).all():
                raise ConfigError(f"{what} contain NaN or infinite values")
            x = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
        elif not np.isfinite(x).all():
            raise ConfigError(f"{what} contain NaN or infinite values")
        return np.ascontiguousarray(x)

    def set_search(self, **settings: Any) -> None:
        """Change search-time settings (``ef_search``, ``nprobe``, ``exact_search_below``, ``threads``)."""
        allowed = {"ef_search", "nprobe", "exact_search_below", "threads"}
        if set(settings) - allowed:
            fixed = sorted(set(settings) - allowed)
            raise ConfigError(f"only {sorted(allowed)} can change after building, not {fixed}")
        self._config = dataclasses.replace(self._config, **settings)
        self._params_cache.clear()

    # -- searching ----------------------------------------------------------------------------------

    def search(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | AllowedRows | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` rows per query: (scores float32 (nq, k), rows int64 (nq, k)), best first.

        Short results are padded with row -1 and score -inf. ``allowed``: boolean mask of length
        ``len(self)``, or the same prepared once by :meth:`allow` for many searches; only rows where it
        is True are returned. A 1-D query is taken as one query.
        """
        q = self._prepare(queries, "queries", allow_1d=True)
        require_int("k", k, minimum=0)
        if allowed is None or isinstance(allowed, AllowedRows):
            selection = allowed
        else:  # a plain mask serves this call only: no copy
            selection = self._allowed_rows(np.asarray(allowed))
        if selection is not None and len(selection.mask) != len(self):
            raise ConfigError(f"allowed rows were prepared for {len(selection.mask)} rows, this index has {len(self)}")
        mask = None if selection is None else selection.mask
        n = len(self)
        n_allowed = n if selection is None else selection.count
        if k == 0 or n_allowed == 0 or len(q) == 0:
            return top_k(np.empty((len(q), 0), np.float32), np.empty((len(q), 0), np.int64), k)
        if n_allowed < self._config.exact_search_below * n:
            return self._exact(q, k, None if mask is None else np.flatnonzero(mask))
        scores, rows = self._approximate(q, k, selection)
        # Graph and IVF searches can run out of allowed neighbours; redo those queries exactly.
        want = min(k, n_allowed)
        if rows[:, want - 1].min() < 0:  # faiss fills results from the left
            short = np.flatnonzero(rows[:, want - 1] < 0)
            candidates = None if mask is None else np.flatnonzero(mask)
            scores[short], rows[short] = self._exact(q[short], k, candidates)
        return scores, rows

    def allow(self, allowed: np.ndarray) -> AllowedRows:
        """``allowed`` (a boolean mask, one entry per row) prepared for any number of :meth:`search` calls.

        The mask is copied, so changing it later changes nothing here.
        """
        mask = np.array(allowed)
        mask.flags.writeable = False
        return self._allowed_rows(mask)

    def _allowed_rows(self, mask: np.ndarray) -> AllowedRows:
        if mask.dtype != np.bool_ or mask.shape != (len(self),):
            raise ConfigError(
                f"allowed must be a boolean mask with one entry per row ({len(self)}), got dtype "
                f"{mask.dtype} and shape {mask.shape}; for a list of rows r: "
                "mask = np.zeros(len(index), bool); mask[r] = True"
            )
        return AllowedRows(mask, int(np.count_nonzero(mask)), np.packbits(mask, bitorder="little"))

    def _search_params(self, k: int, selection: AllowedRows | None) -> faiss.SearchParameters:
        if selection is None:  # the common case: built once per k
            cached = self._params_cache.get(k)
            if cached is None:
                cached = self._params_cache[k] = self._new_search_params(k, None)
            return cached
        key = (k, self._config)  # once per k and search settings
        if key not in selection.params:
            selection.params[key] = self._new_search_params(k, selection.bitmap)
        return selection.params[key]

    def _new_search_params(self, k: int, bitmap: np.ndarray | None) -> faiss.SearchParameters:
        c = self._config
        if self._kind == "hnsw":
            # HNSW needs a candidate list at least k long to return k results.
            params = faiss.SearchParametersHNSW(efSearch=max(c.ef_search, k))
        elif self._kind in IVF_KINDS:
            params = faiss.SearchParametersIVF(nprobe=min(c.nprobe, self._index.nlist))
        else:
            params = faiss.SearchParameters()
        if bitmap is not None:
            # The wrappers keep the bitmap and the selector alive as long as params.
            params.sel = faiss.IDSelectorBitmap(bitmap)
        return params

    def _approximate(self, q: np.ndarray, k: int, selection: AllowedRows | None) -> tuple[np.ndarray, np.ndarray]:
        params = self._search_params(k, selection)
        if self._config.threads is None:  # skip the context manager: it is a tenth of a fast query's time
            scores, rows = self._index.search(q, k, params=params)
        else:
            with omp_threads(self._config.threads):
                scores, rows = self._index.search(q, k, params=params)
        if rows[:, -1].min() < 0:  # faiss pads with -FLT_MAX; -inf says "no result" unambiguously
            scores[rows < 0] = -np.inf
        return scores, rows

    def _exact(self, q: np.ndarray, k: int, candidates: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Brute-force top k over ``candidates`` rows (all rows if None), in blocks to bound memory.

        Vectors come from the index itself: exact for flat, hnsw and ivf; for ivfpq they are the
        PQ-decoded vectors, the same ones its approximate search scores.
        """
        rows = np.arange(len(self), dtype=np.int64) if candidates is None else candidates.astype(np.int64)
        return exact_top_k(q, k, rows, self._index.reconstruct_batch)

    # -- persistence and introspection --------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically: a temporary file in the same directory, fsync, then rename over ``path``.

        An IVF index saved before its first add is written as an empty flat index and loads back untrained.
        """
        target = Path(path)
        index = self._index if self._index is not None else faiss.IndexFlatIP(self._dim)
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        try:
            faiss.write_index(index, tmp)
            with open(tmp, "rb") as written:
                fsync_file(written)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        fsync_directory(target.parent)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        config: VectorIndexConfig | str | None = None,
        mapped: mmap.mmap | None = None,
    ) -> VectorIndex:
        """Read an index written by :meth:`save`.

        The structure (kind, dimension, m, nlist, PQ) comes from the file; ``config`` supplies the search
        settings (ef_search, nprobe, exact_search_below, threads) and must name the same kind, or an IVF
        kind for a file that fell back to flat. ``mapped``: the file's bytes, mapped earlier (a segment maps
        the file when it opens and reads it at its first dense search; the mapping outlives a merge's
        unlink), streamed to faiss without a second copy.
        """
        config = as_config(config)
        if mapped is None and not Path(path).is_file():
            raise CorruptIndexError(f"{path}: vector index file is missing")
        try:
            index = faiss.read_index(os.fspath(path) if mapped is None else faiss.PyCallbackIOReader(_reader(mapped)))
        except RuntimeError as error:
            raise CorruptIndexError(f"{path}: not a readable faiss index ({error})") from None
        kind = _kind_of(index)
        fell_back = kind == "flat" and config.kind in IVF_KINDS
        if kind != config.kind and not fell_back:
            raise IndexMismatchError(
                f"{path} holds a {kind} vector index but the config asks for {config.kind}; "
                "search it with that kind or rebuild it"
            )
        if index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise IndexMismatchError(f"{path}: expected an inner-product faiss index")
        loaded = cls(index.d, config)
        # An empty flat file for an IVF config is an IVF index saved before training: keep it untrained.
        if not (fell_back and index.ntotal == 0):
            loaded._kind, loaded._index = kind, index
        if kind in IVF_KINDS and not index.direct_map.type:
            index.make_direct_map()
        return loaded

    def __len__(self) -> int:
        return 0 if self._index is None else int(self._index.ntotal)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def config(self) -> VectorIndexConfig:
        return self._config

    @property
    def stats(self) -> dict[str, Any]:
        """Kind asked for and kind in use, sizes, and the structure parameters actually built."""
        stats: dict[str, Any] = {
            "kind": self._config.kind,
            "effective_kind": self._kind,
            "metric": self._config.metric,
            "dim": self._dim,
            "rows": len(self),
            "trained": self._index is not None,
        }
        if self._kind == "hnsw":
            stats["m"] = int(self._index.hnsw.nb_neighbors(1))
        if self._kind in IVF_KINDS and self._index is not None:
            stats["nlist"] = int(self._index.nlist)
        if self._kind == "ivfpq" and self._index is not None:
            stats["pq_m"], stats["pq_bits"] = int(self._index.pq.M), int(self._index.pq.nbits)
        return stats
