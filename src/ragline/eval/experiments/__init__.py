"""The lecture's lab experiments beyond chunking and position: one module per experiment.

Each module has ``run(...) -> dict`` (JSON-able) and ``tables(payload) -> list[rich Table]``, and registers an
:class:`Experiment` (role ``experiment`` of ``ragline.components``) that ``ragline experiment NAME`` runs from
its command-line arguments. They run on
a :class:`Workload`: an index and typed queries with gold documents, built from a built-in corpus
(Orrin Grid by default, every question runs as its asking user) or from any BEIR / questions folder
(one type, ``all``; gold = the qrels' relevant documents).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragline.index import Index, IndexSettings
from ragline.index.filters import FilterLike, acl_filter

# Chunks as the lecture's retrieval tables cut them: by document structure.
DEFAULT_CHUNKER = "structure:max_words=200"
Ranker = Callable[[str, int, FilterLike], Sequence[tuple[str, float]]]


@dataclass(frozen=True)
class Experiment:
    """An experiment as the registry holds it (role ``experiment``): ``run(args)`` with ``ragline experiment``'s
    parsed arguments gives the JSON payload, which the command prints as ``tables(payload)`` or one JSON line
    (and draws with ``plot(payload, path)`` for ``--plot``); ``configs``: it takes ``--config`` pipeline configs.
    With ``own_output`` ``run(args)`` prints its own result and returns the exit status."""

    name: str
    run: Callable[[Any], Any]
    tables: Callable[[dict[str, Any]], list[Any]] | None = None
    plot: Callable[[dict[str, Any], str], None] | None = None
    configs: bool = False
    own_output: bool = False


def llm_of(args: Any) -> Any:
    """The LLM of ``--llm`` (its replies cached), or None for ``--llm none`` / ``--closed-book 0``."""
    from ragline.answer.pipeline import build_reader

    if args.llm in ("", "none") or args.closed_book == 0:
        return None
    return getattr(build_reader(args.llm), "llm", None)  # an LLM reader's model


def configs_of(args: Any) -> list[Any]:
    """The pipeline configs of ``--config`` (files or shipped names)."""
    from ragline.config import load_config

    return [load_config(source) for source in args.config or []]


@dataclass
class Query:
    id: str
    text: str
    type: str
    gold: frozenset[str]
    filter: FilterLike = None


@dataclass
class Workload:
    """An index of a corpus's chunks and the judged queries to run against it."""

    name: str
    index: Index
    queries: list[Query]
    owner: dict[str, str] = field(default_factory=dict)  # chunk id -> document id

    def documents_of(self, ranked: Sequence[tuple[str, float]]) -> list[str]:
        """Document ids best first, a document's chunks folded into its first occurrence."""
        seen: dict[str, None] = {}
        for chunk_id, _ in ranked:
            seen.setdefault(self.owner.get(chunk_id, chunk_id), None)
        return list(seen)


def _owners(index: Index) -> dict[str, str]:
    return {d.id: d.document_id for d in index.documents()}


def orrin_workload(embedder: str | None = None, chunker: str = DEFAULT_CHUNKER, seed: int | None = None) -> Workload:
    """Orrin Grid's chunks and its answerable questions, each filtered to the asking user's groups."""
    from ragline.corpora.orrin import DEFAULT_SEED, build_orrin
    from ragline.ingest.pipeline import IngestConfig, build_index

    corpus = build_orrin(DEFAULT_SEED if seed is None else seed)
    settings = IndexSettings(embedder=embedder, vector_index="flat")
    index = build_index(corpus.documents, IngestConfig(chunker), settings)
    queries = [
        Query(q.id, q.text, q.type, frozenset(q.gold_doc_ids), acl_filter(q.user_groups))
        for q in corpus.questions
        if q.gold_doc_ids
    ]
    return Workload(corpus.name, index, queries, _owners(index))


def dataset_workload(path: str, embedder: str | None = None, split: str = "test", limit: int | None = None) -> Workload:
    """A BEIR or questions folder: whole documents, judged queries of ``split`` (the first ``limit``)."""
    from ragline.eval.datasets import load_dataset
    from ragline.eval.metrics import RELEVANCE_LEVEL

    dataset = load_dataset(path, split)
    index = Index.create(None, IndexSettings(embedder=embedder, vector_index="flat"))
    index.add(dataset.corpus)
    index.commit()
    types = {str(q.get("id")): str(q.get("type", "all")) for q in dataset.questions or []}
    queries = []
    for qid, text in list(dataset.judged_queries.items())[:limit]:
        gold = frozenset(d for d, g in dataset.qrels[qid].items() if g >= RELEVANCE_LEVEL)
        queries.append(Query(qid, text, types.get(qid, "all"), gold))
    return Workload(dataset.name, index, queries, {})


def load_workload(dataset: str | None, embedder: str | None, limit: int | None = None) -> Workload:
    return dataset_workload(dataset, embedder, limit=limit) if dataset else orrin_workload(embedder)


class TypeScores:
    """Hit@1, MRR@10 and Recall@10 (all gold documents in the top 10) summed per question type."""

    def __init__(self) -> None:
        self.sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    def add(self, query: Query, ranking: Sequence[str]) -> None:
        rr = next((1 / r for r, d in enumerate(ranking[:10], start=1) if d in query.gold), 0.0)
        for group in dict.fromkeys((query.type, "all")):  # a dataset's one type is "all": count it once
            row = self.sums[group]
            row["n"] += 1
            row["hit@1"] += bool(ranking) and ranking[0] in query.gold
            row["mrr@10"] += rr
            row["recall@10"] += query.gold <= set(ranking[:10])

    def means(self) -> dict[str, dict[str, float]]:
        out = {}
        for group, row in self.sums.items():
            n = row["n"]
            out[group] = {"n": int(n), **{m: round(row[m] / n, 4) for m in ("hit@1", "mrr@10", "recall@10")}}
        return dict(sorted(out.items(), key=lambda item: item[0] == "all"))


def score_by_type(workload: Workload, ranker: Ranker, depth: int = 10) -> dict[str, dict[str, float]]:
    scores = TypeScores()
    for q in workload.queries:
        scores.add(q, workload.documents_of(ranker(q.text, depth, q.filter)))
    return scores.means()
