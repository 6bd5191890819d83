"""Late interaction (ColBERT's MaxSim) over MiniLM's token vectors: a reranker of first-stage hits, and an
exact first stage over a small collection.

ColBERT (Khattab & Zaharia, SIGIR 2020) keeps one vector per token instead of one per passage and scores
``sum over query tokens of the max cosine with any passage token``: finer than one pooled vector, far
cheaper than a cross-encoder, since passage tokens are encoded once, without the query. Here the token
vectors are the packaged bi-encoder's contextual outputs before pooling (``Embedder.token_embeddings``),
L2-normalized and kept as float16 (half the memory; MaxSim is a max of dot products, which float16 keeps
to about 1e-3). Passage vectors are computed when first needed and kept per document id for the
process; :meth:`MaxSimReranker.stored_bytes` reports what they take. MiniLM was never trained for MaxSim
(ColBERT trains its own projection), so this measures what untrained token vectors give.

As a retriever (``maxsim``) every live passage is encoded at the first query, each segment's token vectors
packed into one float16 matrix (segments never change, so a commit encodes only its new segments), and a
query is scored against all of them: exact, no ANN (PLAID's centroids are for millions of passages; this is
for the thousands a token matrix in memory holds). Deleted rows and the filter are masks applied before the
top ``k``. It ranks text queries only (``takes``): its token vectors are its own encoder's, and a pooled vector
(HyDE's, in the index embedder's space) has no tokens to match, so a HyDE query reaches it as the
hypothetical passage's text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragline.components import register
from ragline.errors import ConfigError
from ragline.index.exact_search import top_k
from ragline.index.filters import FilterLike, parse_filter
from ragline.index.store import Index
from ragline.models.embedders import load_embedder
from ragline.progress import track
from ragline.retrieve.base import Ranked, Retriever, empty_query_reason
from ragline.retrieve.rerank import BaseReranker, interpolation_weight, passage_of
from ragline.types import Hit

# Token vectors scored against a query at once, bounding the score matrix's memory (query tokens x this).
SCORE_BLOCK_TOKENS = 1 << 18
PACK_BATCH = 64  # passages encoded at once when the retriever packs a segment


def _unit_tokens(offsets: list[tuple[int, int]], vectors: np.ndarray) -> np.ndarray:
    """The vectors of the text's own tokens (special tokens have an empty span), unit length, float16."""
    kept = vectors[[i for i, (start, end) in enumerate(offsets) if end > start]]
    norms = np.linalg.norm(kept, axis=1, keepdims=True)
    return (kept / np.where(norms > 0, norms, 1.0)).astype(np.float16)


def maxsim(query: np.ndarray, passage: np.ndarray) -> float:
    """``sum_i max_j q_i . p_j`` of unit token vectors (rows); 0 when either side has none."""
    if not len(query) or not len(passage):
        return 0.0
    return float((query.astype(np.float32) @ passage.astype(np.float32).T).max(axis=1).sum())


@register("reranker", "maxsim")
class MaxSimReranker(BaseReranker):
    """ColBERT-style MaxSim over the embedder's token vectors (float16), passages encoded once each."""

    name = "maxsim"

    def __init__(self, embedder: str = "minilm", interpolate: float = 1.0) -> None:
        self.embedder_name = embedder
        self.embedder = load_embedder(embedder)
        self.interpolate = interpolation_weight("maxsim", interpolate)  # mixed with the first stage's, as cross
        self.vectors: dict[tuple[str, int], np.ndarray] = {}

    def token_vectors(self, text: str) -> np.ndarray:
        """Unit float16 vectors of ``text``'s tokens, special tokens ([CLS], [SEP]) left out."""
        return self.token_vectors_batch([text])[0]

    def token_vectors_batch(self, texts: list[str]) -> list[np.ndarray]:
        """``token_vectors`` of each of ``texts``, encoded in batches (equal to one at a time)."""
        return [_unit_tokens(offsets, vectors) for offsets, vectors in self.embedder.token_embeddings_batch(texts)]

    def _passages(self, hits: list[Hit]) -> list[np.ndarray]:
        """Each hit's token vectors: those not kept yet are encoded together, then kept."""
        texts = [passage_of(hit) for hit in hits]
        keys = [(hit.doc_id, hash(text)) for hit, text in zip(hits, texts)]  # a changed text is encoded again
        missing = {key: text for key, text in zip(keys, texts) if key not in self.vectors}
        self.vectors.update(zip(missing, self.token_vectors_batch(list(missing.values()))))
        return [self.vectors[key] for key in keys]

    def scores(self, query: str, hits: list[Hit]) -> list[float]:
        q = self.token_vectors(query)
        return [maxsim(q, passage) for passage in self._passages(hits)]

    def stored_bytes(self) -> int:
        return sum(v.nbytes for v in self.vectors.values())

    def config(self) -> dict[str, Any]:
        return {
            "name": "maxsim",
            "embedder": self.embedder_name,
            "embedder_id": self.embedder.id,
            "dtype": "float16",
            "interpolate": self.interpolate,
        }


@register("retriever", "maxsim")
class MaxSimRetriever(Retriever):
    """MaxSim against every live passage (token vectors float16, encoded once); for small collections."""

    name = "maxsim"

    def __init__(self, index: Index, embedder: str = "minilm", max_rows: int = 50_000) -> None:
        super().__init__(index)
        self.encoder = MaxSimReranker(embedder)
        self.max_rows = int(max_rows)
        self.packed: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # segment name -> (tokens x dim, row starts)

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        if k <= 0 or empty_query_reason(query, self.index.settings.analyzer):
            return []
        q = self.encoder.token_vectors(query).astype(np.float32)
        node = parse_filter(filter)
        found: list[tuple[float, int, int]] = []
        for si in range(len(self.index.segments)):
            vectors, starts = self._segment(si)
            allowed = self.index.live_mask(si, node)
            rows = np.flatnonzero((starts[1:] > starts[:-1]) & (True if allowed is None else allowed))
            if len(q) and len(rows):
                scored = segment_maxsim(q, vectors, starts)[rows][np.newaxis, :]
                scores, best = top_k(scored, rows[np.newaxis, :], min(k, len(rows)))  # sized by the rows
                found.extend((float(sc), si, int(r)) for sc, r in zip(scores[0], best[0]) if r >= 0)
        found.sort(key=lambda t: (-t[0], t[1], t[2]))  # ties: segment, then row
        return [(self.index.segments[si].ids[row], score) for score, si, row in found[:k]]

    def _segment(self, si: int) -> tuple[np.ndarray, np.ndarray]:
        """Segment ``si``'s token vectors, packed (rows deleted when it was first read have none)."""
        seg = self.index.segments[si]
        if seg.name not in self.packed:
            if len(self.index) > self.max_rows:
                raise ConfigError(
                    f"retriever 'maxsim' keeps every passage's token vectors in memory and this index has "
                    f"{len(self.index)} live rows (max_rows={self.max_rows}); rerank a first stage instead: "
                    "reranked:first=hybrid,reranker=maxsim"
                )
            live = np.flatnonzero(~self.index.deleted[si]).tolist()
            parts = [np.zeros((0, self.encoder.embedder.dim), np.float16)] * len(seg)
            batches = [live[start : start + PACK_BATCH] for start in range(0, len(live), PACK_BATCH)]
            for rows in track(batches, f"token vectors of {len(live)} passages ({seg.name})", len(batches)):
                docs = [seg.document(row) for row in rows]
                texts = [passage_of(Hit(doc.id, 0.0, 0, doc.title, doc.text)) for doc in docs]
                for row, vectors in zip(rows, self.encoder.token_vectors_batch(texts)):
                    parts[row] = vectors
            starts = np.zeros(len(seg) + 1, dtype=np.int64)
            np.cumsum([len(part) for part in parts], out=starts[1:])
            # Segments merged away since are let go; the others' vectors are kept as they are.
            self.packed = {s.name: self.packed[s.name] for s in self.index.segments if s.name in self.packed}
            self.packed[seg.name] = (np.concatenate(parts), starts)
        return self.packed[seg.name]

    def stored_bytes(self) -> int:
        """What the packed token vectors take in memory."""
        return sum(v.nbytes + s.nbytes for v, s in self.packed.values())

    def config(self) -> dict[str, Any]:
        encoder = self.encoder.config()
        return {
            "name": self.name,
            "embedder": encoder["embedder"],
            "embedder_id": encoder["embedder_id"],
            "dtype": encoder["dtype"],
            "max_rows": self.max_rows,
        }


def segment_maxsim(q: np.ndarray, vectors: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """MaxSim of query tokens ``q`` (float32) with each row of a packed segment (``vectors[starts[r]:starts[r +
    1]]`` are row r's tokens); 0 for a row without tokens. Rows are scored a block of tokens at a time."""
    scores = np.zeros(len(starts) - 1, dtype=np.float64)
    first = 0
    while first < len(starts) - 1:
        last = int(np.searchsorted(starts, starts[first] + SCORE_BLOCK_TOKENS, side="right")) - 1
        last = max(last, first + 1)  # a row longer than a block is still scored whole
        lo, hi = int(starts[first]), int(starts[last])
        if hi > lo:
            sims = q @ vectors[lo:hi].astype(np.float32).T  # (query tokens, block tokens)
            block = starts[first:last] - lo
            nonempty = block < np.append(block[1:], hi - lo)
            best = np.maximum.reduceat(sims, block[nonempty], axis=1)  # each row's best token per query token
            scores[first:last][nonempty] = best.sum(axis=0)
        first = last
    return scores
