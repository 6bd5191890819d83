"""The retriever base class: anything that ranks document ids for a query, filter applied inside; a typed query
(``ragline.roles.Query``) reaches the kind of search each retriever declares it takes."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ragline.components import component, spec_of
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.roles import TEXT, VECTOR, Query
from ragline.store.base import as_collection
from ragline.types import Hit

Ranked = list[tuple[str, float]]


class Retriever(ABC):
    """Ranks the documents of an ``Index``. ``rank`` is the one method to write.

    ``filter`` is applied inside the ranking, before the top ``k`` are chosen, so a filtered
    search returns ``k`` results whenever ``k`` allowed documents match. A subclass that needs the
    index's vectors sets ``needs_embeddings = True`` (or a function of its spec's parameters), and
    takes vector queries: it adds ``VECTOR`` to ``takes`` and writes ``rank_vector``. A retriever made of
    others (hybrid's legs, a first stage) overrides ``rank_query`` to hand each the typed query whole.
    """

    name: str = "retriever"
    needs_embeddings: Any = False
    takes: frozenset[str] = frozenset((TEXT,))  # the query kinds it ranks by (ragline.roles.Query)

    def __init__(self, index: Index) -> None:
        self.index = index

    @abstractmethod
    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        """(doc id, score) pairs, best first, at most ``k``."""

    def rank_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> Ranked:
        """(doc id, score) pairs nearest ``vector`` (the index embedder's space); only where ``VECTOR in takes``."""
        raise ConfigError(f"retriever {self.name!r} ranks text queries, not vectors")

    def rank_query(self, query: Query, k: int = 10, filter: FilterLike = None) -> Ranked:
        """``query`` ranked by its vector where this retriever takes one and the query has one, else its text."""
        if query.vector is not None and VECTOR in self.takes:
            return self.rank_vector(query.vector, k, filter)
        return self.rank(query.text, k, filter)

    def search(self, query: str, k: int = 10, filter: FilterLike = None) -> list[Hit]:
        """Ranked hits with their stored title, text and metadata; none for a query without terms."""
        if empty_query_reason(query, self.index.settings.analyzer):
            return []
        return hits_for(self.index, self.rank(query, k, filter))

    def config(self) -> dict[str, Any]:
        """Everything that determines the ranking, for provenance."""
        return {"name": self.name}


def empty_query_reason(query: str, analyzer: Callable[[str], list[str]]) -> str | None:
    """Why ``query`` retrieves nothing, or None when it has terms to search for.

    A blank query, or one of stopwords and punctuation only, has no terms: BM25 scores nothing and a
    dense retriever would return the nearest neighbours of an empty embedding, that is arbitrary
    documents. Saying "no results, and why" is the honest answer for every retriever.
    """
    if not query.strip():
        return "the query is empty"
    if not analyzer(query):
        return f"the query {query.strip()!r} has no searchable terms (only stopwords or punctuation)"
    return None


def hits_for(index: Any, ranked: Ranked) -> list[Hit]:
    """``Hit``s with the stored title, text and metadata of ranked ids (ids no longer stored are skipped), fetched
    in one ``get_many`` (on a store server one request, not one per hit)."""
    stored = as_collection(index).get_many([doc_id for doc_id, _ in ranked]) if ranked else {}
    hits = []
    for rank, (doc_id, score) in enumerate(ranked, start=1):
        doc = stored.get(doc_id)
        if doc is not None:
            hits.append(Hit(doc_id, score, rank, doc.title, doc.text, doc.metadata, doc.parent))
    return hits


def needs_embeddings(specs: Iterable[str | Mapping[str, Any]] | str | Mapping[str, Any]) -> bool:
    """Whether any retriever of ``specs`` searches vectors (so the index must be built with an embedder)."""
    if isinstance(specs, (str, Mapping)):
        specs = [specs]
    for spec in specs:
        name, params = spec_of(spec)
        flag = getattr(component("retriever", name).factory, "needs_embeddings", False)
        if flag(params) if callable(flag) else flag:
            return True
    return False
