"""Retrievers built from a spec, the syntax shared by the CLI, pipeline configs and the evaluation.

``NAME[:key=value,key=value...]`` (``ragline.specs``); the names are the registered retrievers
(``ragline.components``: ``bm25``, ``dense``, ``hybrid``, and any added in ``ragline/retrieve/``)::

    bm25                              bm25:variant=bm25+,k1=1.2,b=0.75
    dense
    hybrid                            hybrid:fuser=rrf,k=60,depth=1000
    hybrid:fuser=min_max,weights=0.7/0.3,depth=200
    hybrid:legs=[bm25:k1=1.2; dense]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragline import specs
from ragline.components import build, names
from ragline.index.bm25 import BM25Params
from ragline.index.store import Index
from ragline.retrieve.base import Retriever, needs_embeddings
from ragline.retrieve.store import for_store
from ragline.store.base import Collection, is_embedded

__all__ = ["build_retriever", "needs_embeddings", "parse_spec", "retriever_names"]


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"hybrid:fuser=rrf,k=60"`` -> ``("hybrid", {"fuser": "rrf", "k": 60})``."""
    return specs.parse_spec(spec, "retriever spec")


def retriever_names() -> tuple[str, ...]:
    return names("retriever")


def build_retriever(
    spec: str | Mapping[str, Any], index: Index | Collection, bm25: BM25Params | None = None
) -> Retriever:
    """The retriever ``spec`` names over ``index``; ``bm25`` supplies BM25 defaults (CLI flags).

    On a store other than the embedded index, ``bm25``, ``dense`` and ``hybrid`` rank through the store's
    own searches (``ragline.retrieve.store.for_store``).
    """
    if not is_embedded(index):
        spec = for_store(spec)
    return build("retriever", spec, index=index, bm25=bm25 or index.settings.bm25)  # type: ignore[no-any-return]
