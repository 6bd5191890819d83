"""A deterministic synthetic corpus for BM25 speed tests: short documents over a Zipf-like vocabulary.

Terms are pseudo-words ``w0, w1, ...`` (only ``\\w`` characters, already lowercase, so every analyzer
keeps them as they are), ranked by frequency: ``w0`` is the most common. Term ranks follow a
Zipf-Mandelbrot law, ``p(r) ~ 1 / (r + 2.7) ** 1.0`` (Mandelbrot's fit to English), over
``vocab_size`` ranks. Documents have 5-30 tokens (uniform). Queries have 2-6 tokens drawn from the same
law restricted to ranks >= ``skip_top`` (renormalized), so they avoid the few words that occur in a
large share of the documents, as real, selective queries do.

Sampling is vectorized (one ``searchsorted`` over the cumulative distribution for all tokens); only
the final split into per-document lists is a Python loop, one step per document.
"""

from __future__ import annotations

import numpy as np

ZIPF_EXPONENT = 1.0
ZIPF_SHIFT = 2.7


def _rank_cdf(vocab_size: int, skip_top: int = 0) -> np.ndarray:
    ranks = np.arange(vocab_size, dtype=np.float64)
    weights = 1.0 / (ranks + ZIPF_SHIFT) ** ZIPF_EXPONENT
    weights[:skip_top] = 0.0
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _token_lists(
    rng: np.random.Generator, n: int, min_len: int, max_len: int, cdf: np.ndarray, words: np.ndarray
) -> list[list[str]]:
    lengths = rng.integers(min_len, max_len + 1, size=n)
    ranks = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right")
    ranks = np.minimum(ranks, len(cdf) - 1)  # guard against a draw of exactly 1.0 after rounding
    flat = words[ranks]  # object array of shared str objects: no per-token string creation
    ends = np.cumsum(lengths)
    starts = ends - lengths
    return [flat[s:e].tolist() for s, e in zip(starts.tolist(), ends.tolist())]


def vocabulary(vocab_size: int) -> np.ndarray:
    """The pseudo-words ``w0 .. w{vocab_size-1}`` as an object array (one str object per word)."""
    words = np.empty(vocab_size, dtype=object)
    words[:] = [f"w{i}" for i in range(vocab_size)]
    return words


def synthetic_corpus(
    n_docs: int,
    n_queries: int = 1000,
    vocab_size: int = 200_000,
    seed: int = 0,
    doc_len: tuple[int, int] = (5, 30),
    query_len: tuple[int, int] = (2, 6),
    skip_top: int = 50,
) -> tuple[list[list[str]], list[list[str]]]:
    """(document token lists, query token lists), the same for the same arguments."""
    rng = np.random.default_rng(seed)
    words = vocabulary(vocab_size)
    docs = _token_lists(rng, n_docs, *doc_len, _rank_cdf(vocab_size), words)
    queries = _token_lists(rng, n_queries, *query_len, _rank_cdf(vocab_size, skip_top), words)
    return docs, queries


def more_documents(n_docs: int, vocab_size: int = 200_000, seed: int = 1, doc_len: tuple[int, int] = (5, 30)):
    """``n_docs`` further documents from the same distribution (another seed): an incremental update."""
    rng = np.random.default_rng(seed)
    return _token_lists(rng, n_docs, *doc_len, _rank_cdf(vocab_size), vocabulary(vocab_size))


if __name__ == "__main__":
    import sys
    import time

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    t0 = time.perf_counter()
    docs, queries = synthetic_corpus(n)
    took = time.perf_counter() - t0
    tokens = sum(map(len, docs))
    distinct = len({t for d in docs for t in d})
    print(f"{n} docs, {tokens} tokens, {distinct} distinct terms, {len(queries)} queries in {took:.2f}s")
    print("doc 0:", " ".join(docs[0]))
    print("query 0:", " ".join(queries[0]))
