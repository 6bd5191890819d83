"""BM25 scoring functions: the variants compared by Kamphuis et al. (ECIR 2020), vectorized.

A document's score is a sum over query terms of ``idf(term) * tf_weight(tf, doc_length)``. The index
keeps raw term frequencies, so every variant and every (k1, b, delta) is chosen at query time.

Conventions (written down because implementations disagree):

- ``lucene`` (default) — IDF ``ln(1 + (N - df + 0.5) / (df + 0.5))``; tf weight
  ``tf / (tf + k1 * (1 - b + b * dl / avgdl))``. Like Lucene 8+ and bm25s, there is **no** ``(k1 + 1)``
  factor in the numerator: it scales every score by the same constant and changes no ranking.
- ``robertson`` — IDF ``ln((N - df + 0.5) / (df + 0.5))``, clamped at 0 (as bm25s does) so terms in more
  than half the collection add nothing; tf weight as ``lucene``.
- ``okapi`` — rank_bm25's BM25Okapi: Robertson IDF, where negative values are replaced by
  ``epsilon * mean IDF`` over the vocabulary; tf weight with the ``(k1 + 1)`` numerator.
- ``atire`` — IDF ``ln(N / df)``; tf weight with ``(k1 + 1)``.
- ``bm25l`` (Lv & Zhai 2011) — IDF ``ln((N + 1) / (df + 0.5))``; ``c = tf / (1 - b + b * dl / avgdl)``,
  weight ``(k1 + 1)(c + delta) / (k1 + c + delta)``.
- ``bm25+`` (Lv & Zhai 2011) — IDF ``ln((N + 1) / df)``; weight ``(k1 + 1) tf / (k1 (1 - b + b dl/avgdl) + tf)
  + delta``.
- ``tfidf`` — IDF ``ln(1 + N / df)``, weight ``1 + ln(tf)`` (sublinear tf, no length normalization).

``bm25l`` and ``bm25+`` give a document that lacks a term a non-zero weight (their tf weight at tf = 0).
As in bm25s, ragline stores ``weight(tf) - weight(0)`` per posting and adds the constant
``sum idf * weight(0)`` to every matching document: rankings and scores equal the textbook formula.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragline.errors import ConfigError

VARIANTS = ("lucene", "robertson", "okapi", "atire", "bm25l", "bm25+", "tfidf")


@dataclass(frozen=True)
class BM25Params:
    """Which BM25 and its free parameters; defaults are Anserini's (k1 0.9, b 0.4)."""

    variant: str = "lucene"
    k1: float = 0.9
    b: float = 0.4
    delta: float = 0.5
    epsilon: float = 0.25

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ConfigError(f"unknown BM25 variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")
        if self.k1 < 0:
            raise ConfigError(f"k1 must be >= 0, got {self.k1}")
        if not 0 <= self.b <= 1:
            raise ConfigError(f"b must be between 0 and 1, got {self.b}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def idf(params: BM25Params, df: np.ndarray, n_docs: int) -> np.ndarray:
    """IDF of each term from its document frequency (terms with df = 0 get 0)."""
    df = np.asarray(df, dtype=np.float64)
    out = np.zeros_like(df)
    present = df > 0
    d, n = df[present], float(n_docs)
    v = params.variant
    if v == "lucene":
        out[present] = np.log1p((n - d + 0.5) / (d + 0.5))
    elif v == "robertson":
        out[present] = np.log(np.maximum((n - d + 0.5) / (d + 0.5), 1.0))
    elif v == "okapi":
        raw = np.log(n - d + 0.5) - np.log(d + 0.5)
        out[present] = np.where(raw < 0, params.epsilon * raw.mean() if raw.size else 0.0, raw)
    elif v == "atire":
        out[present] = np.log(n / d)
    elif v == "bm25l":
        out[present] = np.log((n + 1) / (d + 0.5))
    elif v == "bm25+":
        out[present] = np.log((n + 1) / d)
    else:  # tfidf
        out[present] = np.log1p(n / d)
    return out


def tf_weight(params: BM25Params, tf: np.ndarray, doc_len: np.ndarray, avg_len: float) -> np.ndarray:
    """Weight of each posting, minus the weight a document without the term would get (see module doc)."""
    tf = np.asarray(tf, dtype=np.float64)
    k1, b, v = params.k1, params.b, params.variant
    norm = 1.0 - b + b * np.asarray(doc_len, dtype=np.float64) / max(avg_len, 1e-9)
    if v in ("lucene", "robertson"):
        return tf / (tf + k1 * norm)
    if v in ("okapi", "atire"):
        return tf * (k1 + 1) / (tf + k1 * norm)
    if v == "bm25l":
        c = tf / norm
        return (k1 + 1) * (c + params.delta) / (k1 + c + params.delta) - absent_weight(params)
    if v == "bm25+":
        return (k1 + 1) * tf / (k1 * norm + tf)  # + delta - delta: the absent weight is delta
    return 1.0 + np.log(tf)  # tfidf


def absent_weight(params: BM25Params) -> float:
    """tf weight of a term a document does not contain (non-zero only for bm25l and bm25+)."""
    if params.variant == "bm25l":
        k1, d = params.k1, params.delta
        return (k1 + 1) * d / (k1 + d)
    if params.variant == "bm25+":
        return params.delta
    return 0.0
