"""Query transforms: RM3 feedback and thesaurus expansion (no model); LLM rewrite, multi-query, HyDE, decomposition.

A transform turns a query into weighted queries (``ragline.roles.QueryTransform``); the pipeline, or the
``transformed`` retriever below, ranks each and fuses the runs with their weights. Every transform keeps
the original query as the first, weight 1, so an added query adds evidence and never replaces it.

A transform that reads documents (RM3 reads its feedback documents) takes the search's ``filter``, so
that it only reads what the principal may read: terms from a document the user may not see would leak
what it says into the query and so into the results.

* ``rm3``: relevance model 3 (Lavrenko & Croft, "Relevance-Based Language Models", SIGIR 2001; RM3 as in
  Abdul-Jaleel et al., UMass at TREC 2004, and Anserini). The first stage's top ``fb_docs`` documents form
  the relevance model ``P(w|R) = sum_d P(w|d) P(d|q)``, ``P(d|q)`` their retrieval scores normalized to
  sum 1; its ``fb_terms`` best terms that are not in the query make a second query of weight ``weight``.
  RM3 proper mixes term weights inside one query; a BM25 query here is text, so the mixture is done by
  fusing the two runs instead.
* ``synonyms``: the lecture's thesaurus groups: a file with one group per line (``car, automobile, auto``);
  a query with a word of a group gets a second query with the group's other words added.

The LLM transforms read only the query, so their replies carry no document text; they go through the
reply cache (``CachedLLM``), greedy and seeded, so a rerun asks the model nothing. ``model=SPEC`` (a
``load_llm`` spec, default the packaged Qwen) is loaded at the first query unless a model is passed in.

* ``rewrite``: the query rewritten for search (Ma et al., "Query Rewriting for Retrieval-Augmented
  LLMs", 2023), weight ``weight``.
* ``multi-query``: ``n`` paraphrases, each weight 1, fused with the original (RRF in the ``transformed``
  retriever: RAG-Fusion, Rackauckas 2024).
* ``hyde``: a hypothetical passage that answers the query (Gao et al., "Precise Zero-Shot Dense
  Retrieval without Relevance Labels", 2022). Its query (a ``ragline.roles.Query``) carries the passage's
  text for word-matching legs and, for every leg that takes vectors (``dense``, ``store-dense``, a hybrid's
  dense leg), the mean of the passage's and the query's unit vectors.
* ``decompose``: the sub-questions of the agent's ``LLMDecomposer`` (or ``decomposer=rules``), each
  weight ``weight``; a hop's ``{bridge}`` slot, unknown before reading, is left out.
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragline.components import build, register
from ragline.errors import ConfigError, InputError
from ragline.index.bm25 import BM25Params
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.retrieve.base import Ranked, Retriever, needs_embeddings
from ragline.retrieve.fusion import fuse, rank
from ragline.roles import Query
from ragline.store.base import as_collection

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

    def expansion_terms(self, query: str, filter: FilterLike = None) -> list[tuple[str, float]]:
        """The relevance model's best (word, probability) pairs outside the query, best first.

        The feedback documents are retrieved under ``filter``: only documents the principal may read.
        """
        ranked = self.first.rank(query, self.fb_docs, filter)
        total = sum(max(score, 0.0) for _, score in ranked)
        if not ranked or total <= 0:
            return []
        in_query = set(self.index.settings.analyzer(query))
        model: Counter[str] = Counter()
        surface: dict[str, Counter[str]] = {}
        stored = as_collection(self.index).get_many([doc_id for doc_id, _ in ranked])
        for doc_id, score in ranked:
            doc = stored.get(doc_id)
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

    def transform(self, query: str, filter: FilterLike = None) -> list[tuple[str, float]]:
        terms = self.expansion_terms(query, filter)
        if not terms:
            return [(query, 1.0)]
        return [(query, 1.0), (" ".join(word for word, _ in terms), self.weight)]

    def config(self) -> dict[str, Any]:
        return {
            "name": "rm3",
            "fb_docs": self.fb_docs,
            "fb_terms": self.fb_terms,
            "weight": self.weight,
            "first": self.first.config(),
        }


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

    @property
    def takes(self) -> frozenset[str]:  # type: ignore[override]
        return self.first.takes

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        return self.rank_query(Query(query), k, filter)

    def rank_query(self, query: Query, k: int = 10, filter: FilterLike = None) -> Ranked:
        """The transforms read ``query``'s text; the original they keep (first, weight 1) stays ``query`` itself,
        so a vector it carries still reaches the first stage's vector legs."""
        written = [(Query.of(q), w) for t in self.transforms for q, w in weighted_queries(t, query.text, filter)]
        queries = [(query if q.text == query.text and q.vector is None else q, w) for q, w in written]
        queries = queries or [(query, 1.0)]
        if len(queries) == 1:
            return self.first.rank_query(queries[0][0], k, filter)
        depth = max(self.depth, k)
        runs = [dict(self.first.rank_query(q, depth, filter)) for q, _ in queries]
        return rank(fuse(self.fuser, runs, weights=[w for _, w in queries]), k)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "first": self.first.config(),
            "transforms": [t.config() for t in self.transforms],
            "fuser": self.fuser,
            "depth": self.depth,
        }


def weighted_queries(transform: Any, query: str, filter: FilterLike = None) -> list[tuple[str | Query, float]]:
    """``transform``'s queries for ``query``; ``filter`` reaches a transform that reads documents (takes one)."""
    if "filter" in inspect.signature(transform.transform).parameters:
        return transform.transform(query, filter=filter)
    return transform.transform(query)


class _LLMTransform:
    """What the LLM transforms share: the model (loaded at the first query), one cached, greedy call."""

    name = ""

    def __init__(self, llm: Any = None, model: str | None = None, max_tokens: int = 96, seed: int = 0) -> None:
        from ragline.models.llm import CachedLLM

        if int(max_tokens) < 1:
            raise ConfigError(f"query transform {self.name!r}: max_tokens must be >= 1, got {max_tokens}")
        self._llm = None if llm is None else CachedLLM.wrap(llm)
        self.model, self.max_tokens, self.seed = model, int(max_tokens), int(seed)
        self.calls = 0

    @property
    def llm(self) -> Any:
        if self._llm is None:
            from ragline.models.llm import shared_llm

            self._llm = shared_llm(self.model)
        return self._llm

    def ask(self, prompt: str) -> str:
        self.calls += 1
        messages = [{"role": "user", "content": prompt}]
        return self.llm.chat(messages, max_tokens=self.max_tokens, seed=self.seed).strip()

    def config(self) -> dict[str, Any]:
        model = self._llm.id if self._llm is not None else (self.model or "default")
        return {"name": self.name, "model": model, "max_tokens": self.max_tokens, "seed": self.seed}


def reply_lines(reply: str, query: str) -> list[str]:
    """The distinct non-empty lines of a reply, list markers and quotes removed, none equal to ``query``."""
    seen, out = {query.strip().lower()}, []
    for line in reply.splitlines():
        line = re.sub(r"^\s*(?:\d+[.):]|[-*\u2022]|(?:query|question)\s*\d*:)\s*", "", line, flags=re.I)
        line = line.strip().strip("\"'").strip()
        if len(line) > 3 and line.lower() not in seen:
            seen.add(line.lower())
            out.append(line)
    return out


@register("query_transform", "rewrite")
class LLMRewrite(_LLMTransform):
    """The LLM's rewrite of the query for search, beside the query (weight=W; model=SPEC)."""

    name = "rewrite"
    PROMPT = (
        "Rewrite this question as a search query for a document collection. Use the words a document that "
        "answers it would use. Write only the query.\n\nQuestion: "
    )

    def __init__(self, llm: Any = None, model: str | None = None, weight: float = 1.0, **options: Any) -> None:
        super().__init__(llm, model, **options)
        self.weight = float(weight)

    def transform(self, query: str) -> list[tuple[str, float]]:
        lines = reply_lines(self.ask(self.PROMPT + query), query)
        return [(query, 1.0), (lines[0], self.weight)] if lines else [(query, 1.0)]

    def config(self) -> dict[str, Any]:
        return {**super().config(), "weight": self.weight}


@register("query_transform", "multi-query")
class MultiQuery(_LLMTransform):
    """n LLM paraphrases of the query, each weight 1, fused with it (RAG-Fusion; n=3, model=SPEC)."""

    name = "multi-query"
    PROMPT = (
        "Write {n} different search queries that ask the same as this question, with other words. "
        "One query per line, nothing else.\n\nQuestion: "
    )

    def __init__(self, llm: Any = None, model: str | None = None, n: int = 3, **options: Any) -> None:
        super().__init__(llm, model, **options)
        if int(n) < 1:
            raise ConfigError(f"query transform 'multi-query': n must be >= 1, got {n}")
        self.n = int(n)

    def transform(self, query: str) -> list[tuple[str, float]]:
        lines = reply_lines(self.ask(self.PROMPT.format(n=self.n) + query), query)
        return [(query, 1.0)] + [(line, 1.0) for line in lines[: self.n]]

    def config(self) -> dict[str, Any]:
        return {**super().config(), "n": self.n}


@register("query_transform", "hyde")
class HyDE(_LLMTransform):
    """A hypothetical passage answering the query; dense legs search its vector averaged with the query's."""

    name = "hyde"
    PROMPT = "Write a short passage, two sentences, that answers this question.\n\nQuestion: "

    def __init__(
        self, index: Index, llm: Any = None, model: str | None = None, weight: float = 1.0, **options: Any
    ) -> None:
        options.setdefault("max_tokens", 80)
        super().__init__(llm, model, **options)
        self.index, self.weight = index, float(weight)

    def transform(self, query: str) -> list[tuple[str | Query, float]]:
        passage = " ".join(self.ask(self.PROMPT + query).split())
        if not passage:
            return [(query, 1.0)]
        if not self.index.settings.embedder:
            return [(query, 1.0), (passage, self.weight)]
        vectors = np.asarray(self.index.embedder.embed_queries([query, passage]), dtype=np.float64)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        mean = vectors.mean(axis=0)
        vector = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
        return [(query, 1.0), (Query(passage, vector), self.weight)]

    def config(self) -> dict[str, Any]:
        return {**super().config(), "weight": self.weight}


@register("query_transform", "decompose")
class Decompose(_LLMTransform):
    """The query's sub-questions (the agent's decomposer: decomposer=llm|rules), each weight=W."""

    name = "decompose"

    def __init__(
        self, llm: Any = None, model: str | None = None, decomposer: str = "llm", weight: float = 1.0, **options: Any
    ) -> None:
        if decomposer not in ("llm", "rules"):
            raise ConfigError(f"query transform 'decompose': decomposer is llm or rules, got {decomposer!r}")
        super().__init__(llm, model, **options)
        self.decomposer_name, self.weight = decomposer, float(weight)
        self._decomposer: Any = None

    @property
    def decomposer(self) -> Any:
        from ragline.agent.decompose import LLMDecomposer, RuleDecomposer

        if self._decomposer is None:
            rules = self.decomposer_name == "rules"
            self._decomposer = RuleDecomposer() if rules else LLMDecomposer(self.llm, max_tokens=self.max_tokens)
        return self._decomposer

    def transform(self, query: str) -> list[tuple[str, float]]:
        from ragline.agent.decompose import BRIDGE

        self.calls += self.decomposer_name == "llm"
        subs = [" ".join(hop.text.replace(BRIDGE, " ").split()) for hop in self.decomposer.decompose(query)]
        subs = [s for s in dict.fromkeys(subs) if len(s) > 3 and s.lower() != query.strip().lower()]
        return [(query, 1.0)] + [(s, self.weight) for s in subs]

    def config(self) -> dict[str, Any]:
        return {**super().config(), "decomposer": self.decomposer_name, "weight": self.weight}
