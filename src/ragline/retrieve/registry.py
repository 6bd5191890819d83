"""Retrievers built from a spec string, the syntax shared by the CLI and the evaluation.

``NAME[:key=value,key=value...]``; lists use ``/``. Examples::

    bm25                              bm25:variant=bm25+,k1=1.2,b=0.75
    dense
    hybrid                            hybrid:fuser=rrf,k=60,depth=1000
    hybrid:fuser=min_max,weights=0.7/0.3,depth=200

``bm25`` keys: variant, k1, b, delta. ``hybrid`` keys: fuser (rrf, min_max, z_score, weighted_sum,
sum), depth (candidates per leg, default 100), weights, the fuser's own (``k`` for rrf), and the
bm25 keys for its BM25 leg.
"""

from __future__ import annotations

from typing import Any

from ragline import specs
from ragline.errors import ConfigError
from ragline.index.bm25 import BM25Params
from ragline.index.store import Index
from ragline.retrieve.base import Retriever

RETRIEVERS = ("bm25", "dense", "hybrid")
_BM25_KEYS = ("variant", "k1", "b", "delta", "epsilon")


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"hybrid:fuser=rrf,k=60"`` -> ``("hybrid", {"fuser": "rrf", "k": 60})``."""
    return specs.parse_spec(spec, "retriever spec")


def build_retriever(spec: str, index: Index, bm25: BM25Params | None = None) -> Retriever:
    """The retriever ``spec`` names over ``index``; ``bm25`` supplies BM25 defaults (CLI flags)."""
    from ragline.retrieve.dense import DenseRetriever
    from ragline.retrieve.hybrid import HybridRetriever
    from ragline.retrieve.sparse import BM25Retriever

    name, params = parse_spec(spec)
    base = (bm25 or index.settings.bm25).to_dict()
    bm25_params = BM25Params(**{**base, **{k: params.pop(k) for k in _BM25_KEYS if k in params}})
    if name == "bm25":
        retriever: Retriever = BM25Retriever(index, bm25_params)
    elif name == "dense":
        retriever = DenseRetriever(index)
    elif name == "hybrid":
        retriever = HybridRetriever(index, bm25=bm25_params, **params)
        params = {}
    else:
        raise ConfigError(f"unknown retriever {name!r}; choose one of {', '.join(RETRIEVERS)}")
    if params:
        raise ConfigError(f"retriever {name!r} takes no parameters {sorted(params)}")
    return retriever


def needs_embeddings(specs: list[str]) -> bool:
    return any(parse_spec(s)[0] in ("dense", "hybrid") for s in specs)
