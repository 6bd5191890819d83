"""GraphRAG search over the entity graph (``ragline.structures.graph``): ``graph-local`` and ``graph-global``.

``graph-local``: the entities the question names (its n-grams that are entity keys, and its capitalized
names) and their neighbours (entities named with them in a sentence) select chunks: a chunk scores the IDF
of each question entity it names plus ``neighbour_weight`` x the IDF of each neighbour; BM25 breaks ties and
fills up when the question names no known entity. :meth:`GraphLocalRetriever.relations` lists the relations
around the question's entities with the readable chunks behind each.

``graph-global``: the map step ranks the community reports against the question (BM25 over the reports'
text), the reduce step hands on the chunks behind the best ``reports`` reports, in report order (each chunk
once): those are its hits, so any reader answers from them with citations to the chunks. :meth:`reports`
gives the reports themselves as hits (text, ``acl``, ``sources``).

Permissions: a report is derived text. It is offered only when the filter lets through every chunk behind
it (the filter is evaluated on the index, inside retrieval, before the top k); reports are built per ACL and
carry the intersection of their sources' groups (``structures/graph.py``). The local search reads
chunks through the same filter, and a relation is listed with only the chunks the filter lets through (none:
not listed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragline.components import register
from ragline.index.filters import FilterLike
from ragline.index.settings import IndexSettings
from ragline.index.store import Index
from ragline.retrieve.base import Ranked, Retriever, empty_query_reason
from ragline.retrieve.ppr import allowed_ids
from ragline.structures.entities import RuleEntityExtractor, entity_key, query_keys
from ragline.structures.graph import EntityGraph, Report, graph_for
from ragline.types import Document, Hit


def question_entities(query: str, graph: EntityGraph, key_no: dict[str, int]) -> list[int]:
    """Entity ids the question names: its n-grams that are keys, and its capitalized names."""
    keys = list(query_keys(query, key_no))
    keys += [k for k in (entity_key(n) for n in RuleEntityExtractor().query_names(query)) if k in key_no]
    return list(dict.fromkeys(key_no[k] for k in keys))


class _GraphRetriever(Retriever):
    def __init__(self, index: Index, extractor: str = "rules", reporter: str = "extractive") -> None:
        super().__init__(index)
        self.extractor, self.reporter = extractor, reporter
        self._state: tuple[int, EntityGraph, dict[str, int], dict[str, int]] | None = None

    def state(self) -> tuple[EntityGraph, dict[str, int], dict[str, int]]:
        """The graph of the current commit, its key -> entity and chunk id -> number maps."""
        if self._state is None or self._state[0] != self.index.generation:
            graph = graph_for(self.index, self.extractor, reporter=self.reporter)
            keys = {k: i for i, k in enumerate(graph.keys)}
            chunks = {c: i for i, c in enumerate(graph.chunk_ids)}
            self._state = (self.index.generation, graph, keys, chunks)
        return self._state[1], self._state[2], self._state[3]


@register("retriever", "graph-local")
class GraphLocalRetriever(_GraphRetriever):
    """Chunks naming the question's entities and their graph neighbours (GraphRAG local search)."""

    name = "graph-local"

    def __init__(self, index: Index, extractor: str = "rules", neighbour_weight: float = 0.5) -> None:
        super().__init__(index, extractor)
        self.neighbour_weight = float(neighbour_weight)

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        graph, key_no, _ = self.state()
        bm25 = dict(self.index.search_ids(query, max(k, 100), filter))
        allowed = allowed_ids(self.index, filter)
        chunks_of = graph.entity_chunks()
        n = max(len(graph.chunk_ids), 1)
        idf = lambda e: float(np.log1p(n / max(len(chunks_of[e]), 1)))  # noqa: E731
        named = question_entities(query, graph, key_no)
        near: dict[int, float] = {}
        for (a, b), evidence in graph.relations.items():
            for mine, other in ((a, b), (b, a)):
                if (
                    mine in named
                    and other not in named
                    and (allowed is None or any(graph.chunk_ids[c] in allowed for c in evidence))
                ):
                    near[other] = max(near.get(other, 0.0), idf(other))
        scores: dict[str, float] = {}
        for e in named:
            for c in chunks_of[e]:
                scores[graph.chunk_ids[c]] = scores.get(graph.chunk_ids[c], 0.0) + idf(e)
        for e, w in near.items():
            for c in chunks_of[e]:
                cid = graph.chunk_ids[c]
                scores[cid] = scores.get(cid, 0.0) + self.neighbour_weight * w
        if allowed is not None:
            scores = {c: s for c, s in scores.items() if c in allowed}
        top = max(bm25.values(), default=1.0) or 1.0
        ranked = sorted(scores, key=lambda c: (-(scores[c] + bm25.get(c, 0.0) / top * 1e-3), c))[:k]
        out = [(c, scores[c]) for c in ranked]
        held = set(ranked)
        out += [(c, 0.0) for c in bm25 if c not in held][: k - len(out)]
        return out

    def relations(self, query: str, filter: FilterLike = None, limit: int = 20) -> list[dict[str, Any]]:
        """The relations around the question's entities, each with the chunks behind it the filter lets through."""
        graph, key_no, _ = self.state()
        allowed = allowed_ids(self.index, filter)
        named = set(question_entities(query, graph, key_no))
        out = []
        for (a, b), evidence in graph.relations.items():
            if a in named or b in named:
                sources = [graph.chunk_ids[c] for c in evidence]
                sources = [s for s in sources if allowed is None or s in allowed]
                if sources:
                    labels = graph.labels.get((a, b), [])
                    out.append(
                        {"source": graph.names[a], "target": graph.names[b], "labels": labels, "sources": sources}
                    )
        out.sort(key=lambda r: -len(r["sources"]))
        return out[:limit]

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "extractor": self.extractor, "neighbour_weight": self.neighbour_weight}


@register("retriever", "graph-global")
class GraphGlobalRetriever(_GraphRetriever):
    """The chunks behind the community reports that best match the question (GraphRAG global search).

    ``reporter=llm``: the reports are the configured LLM's, written per community and ACL (``graph.py``)."""

    name = "graph-global"

    def __init__(self, index: Index, extractor: str = "rules", reports: int = 3, reporter: str = "extractive") -> None:
        super().__init__(index, extractor, reporter)
        self.n_reports = int(reports)
        self._reports: tuple[int, Index, dict[str, Report]] | None = None

    def report_index(self) -> tuple[Index, dict[str, Report]]:
        graph, _, _ = self.state()
        if self._reports is None or self._reports[0] != self.index.generation:
            by_id = {r.id: r for r in graph.reports}
            small = Index.create(None, IndexSettings(analyzer=self.index.settings.analyzer))
            small.add(
                Document(r.id, r.text, metadata={"acl": r.acl} if r.acl is not None else {}) for r in graph.reports
            )
            small.commit()
            self._reports = (self.index.generation, small, by_id)
        return self._reports[1], self._reports[2]

    def ranked_reports(self, query: str, k: int, filter: FilterLike = None) -> list[tuple[Report, float]]:
        """The ``k`` best reports whose every source chunk the filter lets through (the map step)."""
        small, by_id = self.report_index()
        if not by_id or empty_query_reason(query, self.index.settings.analyzer):
            return []
        allowed = allowed_ids(self.index, filter)
        out = []
        for rid, score in small.search_ids(query, len(by_id)):
            report = by_id[rid]
            if allowed is None or all(s in allowed for s in report.sources):
                out.append((report, score))
                if len(out) == k:
                    break
        return out

    def reports(self, query: str, k: int = 5, filter: FilterLike = None) -> list[Hit]:
        """The best reports as hits: their text, and ``acl`` and ``sources`` (chunk ids) in the metadata."""
        return [
            Hit(r.id, s, i, r.title, r.text, {"acl": r.acl, "sources": r.sources, "level": r.level})
            for i, (r, s) in enumerate(self.ranked_reports(query, k, filter), start=1)
        ]

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        out: Ranked = []
        seen: set[str] = set()
        for report, score in self.ranked_reports(query, self.n_reports, filter):
            for chunk in report.sources:
                if chunk not in seen:
                    seen.add(chunk)
                    out.append((chunk, score))
        return out[:k]

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "extractor": self.extractor, "reports": self.n_reports, "reporter": self.reporter}
