"""Why a document ranked where it did: a query's score for one document, taken apart.

Like Lucene's ``Explanation`` (Elasticsearch's explain API), :func:`explain` returns the BM25 score of
one document as a sum of per-term, per-field contributions (tf, df, idf, document length and the
variant's length normalization, field weight), the dense cosine when the index has vectors, and for
each fuser the document's normalized score in every run, its fused score and its fused rank.

A principal who may not read every live document gets no collection statistics: N, df, IDF and average
lengths are counted over documents it cannot read (how many hidden documents hold a query term would be
told by df), so they, and the per-term contributions and fused scores computed from them, are withheld;
the score (what search shows it anyway), tf, the document's own length and the ranks remain.

Two BM25 totals are given. ``exact_score`` is the float64 sum of the textbook contributions. ``score``
is what ``Index.search`` returns, reproduced step by step: the index stores each posting's weight as
float32 and accumulates them in a float32 buffer, so the two differ in the 7th significant digit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragline.errors import ConfigError
from ragline.index.bm25 import BM25Params, absent_weight, tf_weight
from ragline.index.filters import FilterLike, filter_text, parse_filter, restrict
from ragline.index.store import Index
from ragline.principals import ANYONE, Principal

# The textbook formula of each variant, as text for the explanation (see ragline.index.bm25).
FORMULAS = {
    "lucene": "idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)); idf = ln(1 + (N - df + 0.5) / (df + 0.5))",
    "robertson": "idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)); idf = max(0, ln((N - df + 0.5) / (df + 0.5)))",
    "okapi": "idf * (k1 + 1) tf / (tf + k1 * (1 - b + b * dl / avgdl)); "
    "idf = ln((N - df + 0.5) / (df + 0.5)), negative -> epsilon * mean idf",
    "atire": "idf * (k1 + 1) tf / (tf + k1 * (1 - b + b * dl / avgdl)); idf = ln(N / df)",
    "bm25l": "idf * (k1 + 1)(c + delta) / (k1 + c + delta), c = tf / (1 - b + b * dl / avgdl); "
    "idf = ln((N + 1) / (df + 0.5))",
    "bm25+": "idf * ((k1 + 1) tf / (k1 * (1 - b + b * dl / avgdl) + tf) + delta); idf = ln((N + 1) / df)",
    "tfidf": "idf * (1 + ln tf); idf = ln(1 + N / df)",
}
FUSERS = ("rrf", "min_max", "z_score")


def _locate(index: Index, doc_id: str, principal: Principal = ANYONE) -> tuple[int, int]:
    """Where ``doc_id`` lives, if ``principal`` may read it (the same mask as retrieval's ACL filter).

    Fail closed: an id the principal may not read gets the very message an absent id gets, and the chunks a
    document id hint at are only those it may read, so ids cannot be probed.
    """
    restriction = principal.restriction()

    def readable(where: tuple[int, int]) -> bool:
        return restriction is None or bool(index.segments[where[0]].filter_mask(restriction)[where[1]])

    live = index.id_map()
    where = live.get(doc_id)
    if where is not None and readable(where):
        return where
    chunks = sorted(i for i, w in live.items() if i.startswith(f"{doc_id}#") and readable(w))[:5]
    hint = f"; its chunks are indexed as {', '.join(chunks)}, explain one of those" if chunks else ""
    raise ConfigError(f"{doc_id!r} is not a live document or chunk of the index that you may read{hint}")


def reads_everything(index: Index, principal: Principal) -> bool:
    """Whether ``principal`` may read every live document of ``index`` (then collection statistics tell it
    nothing about documents it cannot read)."""
    restriction = principal.restriction()
    if restriction is None:
        return True
    node = parse_filter(restriction)
    visible = 0
    for si, segment in enumerate(index.segments):
        mask = index.live_mask(si, node)
        visible += len(segment) if mask is None else int(mask.sum())
    return visible == len(index)


# What a principal who cannot read the whole index is not shown (see the module doc).
WITHHELD = "withheld: counted over documents you may not read"
_COLLECTION_KEYS = {
    "n_docs": None,
    "avg_len": None,
    "length_norm": None,
    "df": None,
    "idf": None,
    "tf_weight": None,
    "contribution": None,
    "exact_score": None,
}


def withhold_statistics(lexical: dict[str, Any]) -> dict[str, Any]:
    """``lexical`` (a ``bm25_explanation``) without the collection statistics and what is computed from them."""
    out = {k: (None if k in _COLLECTION_KEYS else v) for k, v in lexical.items()}
    out["fields"] = [{k: (None if k in _COLLECTION_KEYS else v) for k, v in f.items()} for f in lexical["fields"]]
    out["contributions"] = [
        {k: (None if k in _COLLECTION_KEYS else v) for k, v in c.items()} for c in lexical["contributions"]
    ]
    out["statistics"] = WITHHELD
    return out


def _rank_of(ranked: Sequence[tuple[str, float]], doc_id: str) -> int | None:
    return next((r for r, (d, _) in enumerate(ranked, start=1) if d == doc_id), None)


def bm25_explanation(
    index: Index, query: str, doc_id: str, bm25: BM25Params | None = None, principal: Principal = ANYONE
) -> dict[str, Any]:
    """The BM25 score of ``doc_id`` for ``query`` as per-term contributions (see the module doc); a
    document ``principal`` may not read is refused like an absent one, and a principal who cannot read the
    whole index gets the contributions without the collection statistics (``withhold_statistics``)."""
    params = bm25 or index.settings.bm25
    si, row = _locate(index, doc_id, principal)
    segment = index.segments[si]
    terms = index.settings.analyzer(query)
    # The collection statistics (live df, N, average lengths, IDF) of the current commit, as searched.
    scorer = index.bm25_scorer(params)
    vocab, n_docs = scorer["vocab"], scorer["n"]
    gids = [vocab[t] for t in terms if t in vocab]
    absent = absent_weight(params)
    contributions: list[dict[str, Any]] = []
    fields: list[dict[str, Any]] = []
    accumulated = np.float32(0.0)
    for fname, fweight in index.settings.fields.items():
        postings = segment.fields[fname]
        g2l = scorer["g2l"][si][fname]
        dl, avgdl = float(postings.lengths[row]), float(scorer["avg"][fname])
        norm = 1.0 - params.b + params.b * dl / max(avgdl, 1e-9)
        fields.append({"field": fname, "weight": fweight, "doc_len": dl, "avg_len": avgdl, "length_norm": norm})
        for term, gid in ((t, vocab[t]) for t in terms if t in vocab):
            local = int(g2l[gid])
            tf = 0.0
            if local >= 0:
                start, end = int(postings.indptr[local]), int(postings.indptr[local + 1])
                docs = postings.docs[start:end]
                p = int(np.searchsorted(docs, row))
                if p < len(docs) and int(docs[p]) == row:
                    tf = float(postings.tfs[start + p])
            term_idf = float(scorer["idf"][fname][gid])
            if tf:
                stored = tf_weight(params, np.array([tf]), np.array([dl]), avgdl)[0]
                # The index keeps idf * weight per posting in float32 and sums in a float32 buffer.
                w32 = np.float32(stored * term_idf)
                accumulated = np.float32(float(accumulated) + fweight * float(w32))
                weight = float(stored) + absent
            else:
                weight = absent
            contributions.append(
                {
                    "term": term,
                    "field": fname,
                    "field_weight": fweight,
                    "tf": tf,
                    "df": int(scorer["df"][fname][gid]),
                    "idf": term_idf,
                    "tf_weight": weight,
                    "contribution": fweight * term_idf * weight,
                }
            )
    constant = sum(w * absent * float(scorer["idf"][f][gids].sum()) for f, w in index.settings.fields.items())
    exact = float(sum(c["contribution"] for c in contributions))
    # Search takes a row as a candidate only when its accumulated buffer is positive.
    matched = float(accumulated) > 0
    result = {
        "params": params.to_dict(),
        "formula": FORMULAS[params.variant],
        "n_docs": n_docs,
        "terms": terms,
        "unknown_terms": [t for t in terms if t not in vocab],
        "fields": fields,
        "contributions": contributions,
        "absent_weight": absent,
        "matched": matched,
        "score": float(accumulated) + constant if matched else 0.0,
        "exact_score": exact if matched else 0.0,
        "statistics": "collection-wide",
    }
    return result if reads_everything(index, principal) else withhold_statistics(result)


def explain(
    index: Index,
    query: str,
    doc_id: str,
    bm25: BM25Params | None = None,
    query_vector: np.ndarray | None = None,
    fusers: Sequence[str] = FUSERS,
    depth: int = 100,
    filter: FilterLike = None,
    principal: Principal = ANYONE,
) -> dict[str, Any]:
    """Why ``doc_id`` ranks where it does for ``query``: BM25 parts, dense cosine, each fuser's view.

    Ranks are over the top ``depth`` of each retriever (the hybrid retriever's candidate depth), under
    ``filter`` and ``principal``'s ACL restriction. A document or chunk ``principal`` may not read is
    refused with the message an absent id gets (``ConfigError``). The dense part needs vectors in the
    index; ``query_vector`` replaces embedding ``query``. ``out["filter"]`` is the filter applied, as text.
    """
    params = bm25 or index.settings.bm25
    si, row = _locate(index, doc_id, principal)
    filter = restrict(filter, principal.restriction())
    lexical = bm25_explanation(index, query, doc_id, params, principal)
    whole = lexical["statistics"] != WITHHELD
    bm25_run = index.search_ids(query, depth, filter, params)
    lexical["rank"] = _rank_of(bm25_run, doc_id)
    out: dict[str, Any] = {
        "query": query,
        "doc_id": doc_id,
        "depth": depth,
        "bm25": lexical,
        "filter": filter_text(filter),
    }
    vectors = index.segments[si].vectors
    if vectors is None:
        out["dense"] = None
        out["fusion"] = None
        return out
    if query_vector is None:
        query_vector = index.embedder.embed_queries([query])[0]
    q = np.asarray(query_vector, dtype=np.float64)
    v = np.asarray(vectors[row], dtype=np.float64)
    cosine = float(q @ v / max(np.linalg.norm(q) * np.linalg.norm(v), 1e-12))
    segments = index.segments
    dense_run = [(segments[s].ids[r], score) for s, r, score in index.search_vector(query_vector, depth, filter)]
    out["dense"] = {"cosine": cosine, "rank": _rank_of(dense_run, doc_id)}
    fusion = fusion_explanation({"bm25": dict(bm25_run), "dense": dict(dense_run)}, doc_id, fusers)
    if not whole:
        # normalized and fused scores come from BM25 scores built on the withheld statistics; ranks stay
        fusion = {
            name: {"normalized": None, "fused_score": None, "rank": part["rank"]} for name, part in fusion.items()
        }
    out["fusion"] = fusion
    return out


def fusion_explanation(runs: dict[str, dict[str, float]], doc_id: str, fusers: Sequence[str] = FUSERS) -> dict:
    """Per fuser: ``doc_id``'s normalized score in each run (None: not retrieved), fused score and rank."""
    from ragline.retrieve.fusion import fuse, min_max_normalize, rank, reciprocal_ranks, z_score_normalize

    normalizers = {
        "rrf": lambda run: reciprocal_ranks(run, 60),
        "min_max": min_max_normalize,
        "z_score": z_score_normalize,
    }
    out = {}
    for name in fusers:
        if name not in normalizers:
            raise ConfigError(
                f"explain: fuser {name!r} has no normalization to show; choose from {sorted(normalizers)}"
            )
        normalized = {leg: normalizers[name](run).get(doc_id) for leg, run in runs.items()}
        fused = fuse(name, list(runs.values()))
        ranked = rank(fused)
        out[name] = {"normalized": normalized, "fused_score": fused.get(doc_id), "rank": _rank_of(ranked, doc_id)}
    return out
