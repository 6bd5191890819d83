"""Query transforms that need no model: RM3 pseudo-relevance feedback and thesaurus (synonym) expansion.

A transform turns a query into weighted queries (``ragline.roles.QueryTransform``); the pipeline, or the
``transformed`` retriever below, ranks each and fuses the runs with their weights. Both transforms keep
the original query as the first, weight 1, so a feedback query adds evidence and never replaces it.

* ``rm3``: relevance model 3 (Lavrenko & Croft, "Relevance-Based Language Models", SIGIR 2001; RM3 as in
  Abdul-Jaleel et al., UMass at TREC 2004, and Anserini). The first stage's top ``fb_docs`` documents form
  the relevance model ``P(w|R) = sum_d P(w|d) P(d|q)``, ``P(d|q)`` their retrieval scores normalized to
  sum 1; its ``fb_terms`` best terms that are not in the query make a second query of weight ``weight``.
  RM3 proper mixes term weights inside one query; a BM25 query here is text, so the mixture is done by
  fusing the two runs instead.
* ``synonyms``: the lecture's thesaurus groups: a file with one group per line (``car, automobile, auto``);
  a query with a word of a group gets a second query with the group's other words added.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragline.components import build, register
from ragline.errors import ConfigError, InputError
from ragline.index.bm25 import BM25Params
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.retrieve.base import Ranked, Retriever, needs_embeddings
from ragline.retrieve.fusion import fuse, rank

_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
Spec = str | Mapping[str, Any]


class _Stems:
    """Word -> its one analyzed term (None for a stopword), memoized; and a term's commonest surface word."""

    def __init__(self, analyzer: Any) -> None:
        self.analyzer, self.memo = analyzer, {}

    def __call__(self, word: str) -> str | None:
        if word not in self.memo:
            terms = self.analyzer(word)
            self.memo[word] = terms[0] if len(terms) == 1 else None
        return self.memo[word]


@register("query_transform", "rm3")
class RM3:
    """RM3 pseudo-relevance feedback: the top fb_docs documents' best fb_terms terms as a second query."""

    def __init__(
        self, index: Index, fb_docs: int = 10, fb_terms: int = 10, weight: float = 0.5, first: Spec = "bm25"
    ) -> None:
        if fb_docs < 1 or fb_terms < 1 or weight <= 0.0:
            raise ConfigError(f"rm3: fb_docs, fb_terms >= 1 and weight > 0, got {fb_docs}, {fb_terms}, {weight}")
        self.index, self.fb_docs, self.fb_terms, self.weight = index, int(fb_docs), int(fb_terms), float(weight)
        self.first = build("retriever", first, index=index)
        self.stems = _Stems(index.settings.analyzer)

    def expansion_terms(self, query: str) -> list[tuple[str, float]]:
        """The relevance model's best (word, probability) pairs outside the query, best first."""
        ranked = self.first.rank(query, self.fb_docs)
        total = sum(max(score, 0.0) for _, score in ranked)
        if not ranked or total <= 0:
            return []
        in_query = set(self.index.settings.analyzer(query))
        model: Counter[str] = Counter()
        surface: dict[str, Counter[str]] = {}
        for doc_id, score in ranked:
            doc = self.index.get(doc_id)
            if doc is None:
                continue
            words = _WORD.findall(f"{doc.title} {doc.text}".lower())
            stems = [(self.stems(w), w) for w in words]
            stems = [(s, w) for s, w in stems if s is not None]
            if not stems:
                continue
            counts = Counter(s for s, _ in stems)
            for s, w in stems:
                surface.setdefault(s, Counter())[w] += 1
            p_doc = max(score, 0.0) / total
            for s, tf in counts.items():
                model[s] += p_doc * tf / len(stems)
        best = [(s, p) for s, p in model.most_common() if s not in in_query and not s.isdigit()][: self.fb_terms]
        return [(surface[s].most_common(1)[0][0], p) for s, p in best]

    def transform(self, query: str) -> list[tuple[str, float]]:
        terms = self.expansion_terms(query)
        if not terms:
            return [(query, 1.0)]
        return [(query, 1.0), (" ".join(word for word, _ in terms), self.weight)]

    def config(self) -> dict[str, Any]:
        return {"name": "rm3", "fb_docs": self.fb_docs, "fb_terms": self.fb_terms, "weight": self.weight,
                "first": self.first.config()}  # fmt: skip


def read_thesaurus(path: str | Path) -> list[list[str]]:
    """Synonym groups of a file: one group per line, words or phrases separated by commas; ``#`` comments."""
    file = Path(path)
    if not file.is_file():
        raise InputError(str(file), "no such thesaurus file; give one group per line, e.g. 'car, automobile'")
    groups = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        group = [word.strip().lower() for word in line.split(",") if word.strip()]
        if len(group) < 2:
            raise InputError(f"{file}:{number}", f"a group needs two or more comma-separated words, got {line!r}")
        groups.append(group)
    return groups


@register("query_transform", "synonyms")
class SynonymExpansion:
    """Thesaurus expansion: a second query with the other words of each group a query word belongs to."""

    def __init__(self, index: Index, file: str, weight: float = 0.5) -> None:
        self.file, self.weight = str(file), float(weight)
        self.groups = read_thesaurus(file)
        analyzer = index.settings.analyzer
        # Matched on analyzed terms, so "cars" finds the group of "car"; a phrase matches all its terms.
        self.keys = [[tuple(analyzer(word)) for word in group] for group in self.groups]
        self.analyzer = analyzer

    def synonyms(self, query: str) -> list[str]:
        terms = self.analyzer(query)
        found: list[str] = []
        for group, keys in zip(self.groups, self.keys):
            matched = [i for i, key in enumerate(keys) if key and _contains(terms, key)]
            if matched:
                found.extend(word for i, word in enumerate(group) if i not in matched and word not in found)
        return found

    def transform(self, query: str) -> list[tuple[str, float]]:
        added = self.synonyms(query)
        return [(query, 1.0), (f"{query} {' '.join(added)}", self.weight)] if added else [(query, 1.0)]

    def config(self) -> dict[str, Any]:
        return {"name": "synonyms", "file": self.file, "groups": len(self.groups), "weight": self.weight}


def _contains(terms: Sequence[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(terms[i : i + n]) == phrase for i in range(len(terms) - n + 1))


@register("retriever", "transformed")
class TransformedRetriever(Retriever):
    """A retriever (first=SPEC) run on each query that transforms (transforms=[...]) write, runs fused."""

    name = "transformed"

    def __init__(
        self,
        index: Index,
        transforms: Sequence[Spec] | Spec = (),
        first: Spec = "bm25",
        fuser: str = "rrf",
        depth: int = 1000,
        bm25: BM25Params | None = None,
        llm: Any = None,
    ) -> None:
        super().__init__(index)
        if isinstance(transforms, (str, Mapping)):
            transforms = [transforms]
        self.first = build("retriever", first, index=index, bm25=bm25 or index.settings.bm25)
        self.transforms = [build("query_transform", t, index=index, llm=llm) for t in transforms]
        self.fuser, self.depth = fuser, int(depth)
        fuse(fuser, [{}], weights=[1.0])  # an unknown fuser fails now, not at the first query

    @staticmethod
    def needs_embeddings(params: Mapping[str, Any]) -> bool:
        return needs_embeddings(params.get("first", "bm25"))

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        queries = [q for t in self.transforms for q in t.transform(query)] or [(query, 1.0)]
        if len(queries) == 1:
            return self.first.rank(queries[0][0], k, filter)
        depth = max(self.depth, k)
        runs = [dict(self.first.rank(q, depth, filter)) for q, _ in queries]
        return rank(fuse(self.fuser, runs, weights=[w for _, w in queries]), k)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "first": self.first.config(), "transforms": [t.config() for t in self.transforms],
                "fuser": self.fuser, "depth": self.depth}  # fmt: skip
