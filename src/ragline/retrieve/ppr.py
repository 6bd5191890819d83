"""Graph retrieval for multi-hop questions (HippoRAG 2 style): personalized PageRank over passages and entities.

The graph (``ragline.structures.graph``, built from the index's live chunks, or read from
``structures/graph/`` when current) has a node per chunk and per entity, an edge between a chunk and each
entity it names, and synonym edges between entities whose names' embeddings have cosine >= ``synonyms``
(0: none). A question seeds the walk twice: the entities it names (its word n-grams that are entity keys,
each weighted by 1 / the number of chunks naming it, so a rare name counts more) and its ``seed_k`` best
passages by the ``first`` retriever (weights from their scores, min-max); ``passage_weight`` is the
passages' share of the seed. PageRank with restart probability ``1 - damping`` spreads the seed: a passage
that names the bridge entity of a passage the question found gets mass though it shares no word with
the question. Passages rank by their PageRank; those the walk never reaches follow in the first stage's order.
A typed query (``ragline.roles.Query``) reaches the first stage whole: HyDE's vector seeds the passages through
its dense leg, the text names the entities.

The filter is applied inside: the first stage gets it, and chunks it excludes are taken out of the graph
before the walk (their edges go), so neither their text nor their links move what a principal sees.
No LLM at query time. Settings chosen on HotpotQA train-100 questions 1-50
(``benchmarks/ppr_equal_budget.py``; BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import sparse

from ragline.components import register
from ragline.errors import ConfigError
from ragline.index.bm25 import BM25Params
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.retrieve.base import Ranked, Retriever, needs_embeddings
from ragline.retrieve.registry import build_retriever
from ragline.roles import Query
from ragline.structures.base import allowed_ids
from ragline.structures.entities import entity_key, query_keys
from ragline.structures.graph import EntityGraph, embedding_synonyms, graph_for

DEFAULT_FIRST = "hybrid"


class PassageEntityGraph:
    """The adjacency of chunks (nodes 0..P-1) and entities (P..P+E-1), symmetric, weighted."""

    def __init__(self, graph: EntityGraph, synonyms: list[tuple[int, int, float]], idf: bool = True) -> None:
        self.graph = graph
        p, e = len(graph.chunk_ids), len(graph.keys)
        chunks_of = graph.entity_chunks()
        rows, cols, vals = [], [], []
        for c in range(p):
            for ent in graph.chunk_entities(c):
                w = float(np.log1p(p / len(chunks_of[ent]))) if idf else 1.0
                rows += [c, p + ent]
                cols += [p + ent, c]
                vals += [w, w]
        for a, b, sim in synonyms:
            rows += [p + a, p + b]
            cols += [p + b, p + a]
            vals += [sim, sim]
        self.n_passages, self.size = p, p + e
        self.adjacency = sparse.csr_matrix((vals, (rows, cols)), shape=(p + e, p + e), dtype=np.float64)
        self.chunk_no = {cid: i for i, cid in enumerate(graph.chunk_ids)}
        self.key_no = {k: i for i, k in enumerate(graph.keys)}
        self.entity_degree = np.asarray((self.adjacency[p:, :p] > 0).sum(axis=1)).ravel()

    def pagerank(self, seed: np.ndarray, damping: float, keep: np.ndarray | None, iterations: int = 50) -> np.ndarray:
        """Personalized PageRank of ``seed`` over the graph without the nodes ``keep`` marks False."""
        adjacency = self.adjacency
        if keep is not None:
            m = sparse.diags(keep.astype(np.float64))
            adjacency = m @ adjacency @ m
        degree = np.asarray(adjacency.sum(axis=0)).ravel()
        inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
        transition = adjacency @ sparse.diags(inverse)  # column-stochastic where a node has edges
        dangling = degree == 0
        seed = seed / seed.sum()
        r = seed.copy()
        for _ in range(iterations):
            spread = transition @ r + r[dangling].sum() * seed
            new = (1 - damping) * seed + damping * spread
            if np.abs(new - r).sum() < 1e-9:
                return new
            r = new
        return r


@register("retriever", "ppr")
class PPRRetriever(Retriever):
    """Personalized PageRank over a passage-entity graph, seeded by the question's entities and top passages."""

    name = "ppr"

    def __init__(
        self,
        index: Index,
        first: str | Mapping[str, Any] = DEFAULT_FIRST,
        seed_k: int = 5,
        damping: float = 0.5,
        passage_weight: float = 0.5,
        synonyms: float = 0.0,
        extractor: str = "rules",
        idf: bool = True,
        mix: float = 0.0,
        depth: int = 100,
        bm25: BM25Params | None = None,
    ) -> None:
        super().__init__(index)
        if not 0 <= damping < 1 or not 0 <= passage_weight <= 1 or seed_k < 0:
            raise ConfigError(
                f"ppr: damping in [0, 1), passage_weight in [0, 1], seed_k >= 0; got "
                f"{damping}, {passage_weight}, {seed_k}"
            )
        if not 0 <= synonyms <= 1:
            raise ConfigError(f"ppr: synonyms is a cosine threshold in (0, 1], or 0 for none; got {synonyms}")
        self.first = build_retriever(first, index, bm25)
        self.first_spec, self.seed_k, self.damping = first, int(seed_k), float(damping)
        self.passage_weight, self.synonyms, self.extractor = float(passage_weight), float(synonyms), extractor
        self.depth, self.idf, self.mix = int(depth), bool(idf), float(mix)
        self._graph: tuple[int, PassageEntityGraph] | None = None

    @staticmethod
    def needs_embeddings(params: Mapping[str, Any]) -> bool:
        return float(params.get("synonyms", 0.0)) > 0 or needs_embeddings(params.get("first", DEFAULT_FIRST))

    def passage_graph(self) -> PassageEntityGraph:
        """The graph of the index's current commit (built at the first query after a commit)."""
        if self._graph is None or self._graph[0] != self.index.generation:
            graph = graph_for(self.index, self.extractor)
            pairs = embedding_synonyms(graph.keys, self.index.embedder, self.synonyms) if self.synonyms > 0 else []
            self._graph = (self.index.generation, PassageEntityGraph(graph, pairs, self.idf))
        return self._graph[1]

    def seed(self, query: str, first: Ranked, pg: PassageEntityGraph) -> np.ndarray:
        """The restart distribution: the question's entities and its first-stage passages, each summing to its share."""
        p = pg.n_passages
        entities = np.zeros(pg.size)
        keys = set(query_keys(query, pg.key_no))
        keys.update(k for k in (entity_key(n) for n in _query_names(query)) if k in pg.key_no)
        for key in keys:
            e = pg.key_no[key]
            if pg.entity_degree[e] > 0:
                entities[p + e] = 1.0 / pg.entity_degree[e]
        passages = np.zeros(pg.size)
        top = [(pg.chunk_no[d], s) for d, s in first[: self.seed_k] if d in pg.chunk_no]
        if top:
            scores = np.array([s for _, s in top], dtype=np.float64)
            spread = scores.max() - scores.min()
            weights = (scores - scores.min()) / spread if spread > 0 else np.ones_like(scores)
            for (c, _), w in zip(top, weights + 1e-3):
                passages[c] = w
        share = self.passage_weight if entities.any() and passages.any() else float(passages.any())
        seed = np.zeros(pg.size)
        if passages.any():
            seed += share * passages / passages.sum()
        if entities.any():
            seed += (1 - share) * entities / entities.sum()
        return seed

    @property
    def takes(self) -> frozenset[str]:  # type: ignore[override]
        return self.first.takes  # the first stage's seeds take what it takes (HyDE's vector in a dense leg)

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.rank_query(Query(query), k, filter)

    def rank_query(self, query: Query, k: int = 10, filter: FilterLike = None) -> Ranked:
        """The first stage ranks ``query`` as it takes it (its passages seed the walk); entities come from the text."""
        first = self.first.rank_query(query, max(self.depth, k), filter)
        pg = self.passage_graph()
        allowed = allowed_ids(self.index, filter)
        keep = None
        if allowed is not None:
            keep = np.ones(pg.size, dtype=bool)
            keep[: pg.n_passages] = [cid in allowed for cid in pg.graph.chunk_ids]
        seed = self.seed(query.text, first, pg)
        if keep is not None:
            seed[~keep] = 0.0
        if not seed.any():
            return first[:k]
        scores = pg.pagerank(seed, self.damping, keep)[: pg.n_passages]
        if self.mix > 0 and first:
            scores = (1 - self.mix) * scores / max(scores.max(), 1e-12)
            top = max(s for _, s in first)
            low = min(s for _, s in first)
            for d, s in first:
                if d in pg.chunk_no:
                    scores[pg.chunk_no[d]] += self.mix * ((s - low) / (top - low) if top > low else 1.0)
        order = np.argsort(-scores, kind="stable")
        ranked: Ranked = []
        for c in order[:k]:
            if scores[c] <= 0:
                break
            ranked.append((pg.graph.chunk_ids[c], float(scores[c])))
        held = {d for d, _ in ranked}
        ranked += [(d, 0.0) for d, _ in first if d not in held][: k - len(ranked)]
        return ranked

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "first": self.first.config(),
            "seed_k": self.seed_k,
            "damping": self.damping,
            "passage_weight": self.passage_weight,
            "synonyms": self.synonyms,
            "extractor": self.extractor,
            "idf": self.idf,
            "mix": self.mix,
        }


def _query_names(query: str) -> list[str]:
    from ragline.structures.entities import RuleEntityExtractor

    return RuleEntityExtractor().query_names(query)
