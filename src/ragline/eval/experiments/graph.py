"""``ragline experiment graph``: the entity-graph retrievers against plain retrieval, per question type, and the cost.

On an Orrin world with its aggregate questions (``ragline.corpora.aggregate``; the training world unless a
seed is given), whole documents, each question asked as its own user (``user_groups``, the filter inside
retrieval): all-gold recall at a passage budget (every gold document among the top ``budget``) per question
type, for each retriever (default: the LLM-free, embedder-free ones: ``bm25``, ``ppr:first=bm25``,
``graph-local``, ``graph-global``; a retriever that searches vectors makes the index embed with MiniLM).
Paired randomization test of each retriever against the first. The cost of the graph (rules extractor, no
LLM): seconds to build, size of the stored graph, per 1,000 chunks; with ``llm_chunks`` > 0 also a graph with the
LLM extractor over the first ``llm_chunks`` documents (model calls, tokens, seconds), scaled the same way, and one
with the rules extractor and LLM-written community reports (``reporter=llm``) over them.
Retrieval only: no reader.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ragline.answer.context import document_id
from ragline.components import register
from ragline.corpora.aggregate import with_aggregate
from ragline.corpora.orrin import TRAIN_SEED, build_orrin
from ragline.eval.experiments import Experiment
from ragline.eval.stats import compare
from ragline.index import Index
from ragline.index.filter_syntax import acl_filter
from ragline.index.settings import IndexSettings
from ragline.retrieve.registry import build_retriever, needs_embeddings
from ragline.structures.graph import build_graph, to_json

RETRIEVERS = ("bm25", "ppr:first=bm25", "graph-local", "graph-global")


def run(
    seed: int | None = None,
    retrievers: Sequence[str] = RETRIEVERS,
    budget: int = 5,
    llm: Any = None,
    llm_chunks: int = 0,
) -> dict[str, Any]:
    corpus = with_aggregate(build_orrin(TRAIN_SEED if seed is None else seed))
    index = Index.create(None, IndexSettings(embedder="minilm") if needs_embeddings(list(retrievers)) else None)
    index.add(corpus.documents)
    index.commit()
    documents = list(index.documents())
    graph, cost = _graph_cost(documents, "rules")
    questions = [q for q in corpus.questions if q.gold_doc_ids]
    scores: dict[str, dict[str, float]] = {}
    rows = []
    for spec in retrievers:
        retriever = build_retriever(spec, index)
        got = {}
        by_type: dict[str, list[float]] = defaultdict(list)
        for q in questions:
            hits = retriever.search(q.text, budget, acl_filter(q.user_groups))
            value = float(set(q.gold_doc_ids) <= {document_id(h) for h in hits})
            got[q.id] = value
            by_type[q.type].append(value)
        scores[spec] = got
        row: dict[str, Any] = {"retriever": spec, "all": sum(got.values()) / len(got)}
        row["by_type"] = {t: round(sum(v) / len(v), 4) for t, v in sorted(by_type.items())}
        if spec != retrievers[0]:
            test = compare(scores[retrievers[0]], got)
            row["vs_first"] = {"delta": test["delta"], "p_randomization": test["p_randomization"]}
        rows.append(row)
    return {
        "experiment": "graph",
        "corpus": corpus.name,
        "questions": len(questions),
        "budget": budget,
        "metric": f"all-gold recall at {budget} (every gold document among the top {budget})",
        "rows": rows,
        "cost": cost,
        "llm_cost": _graph_cost(documents[:llm_chunks], "llm", llm)[1] if llm_chunks else None,
        "llm_report_cost": _graph_cost(documents[:llm_chunks], "rules", llm, "llm")[1] if llm_chunks else None,
    }


def _graph_cost(
    documents: list[Any], extractor: str, llm: Any = None, reporter: str = "extractive"
) -> tuple[Any, dict[str, Any]]:
    """The graph of ``documents`` built with ``extractor`` and ``reporter``, and its cost: per 1,000 chunks,
    seconds, bytes, and the uncached LLM calls and tokens of the extractor and the reports."""
    started = time.perf_counter()
    graph = build_graph(documents, extractor=extractor, llm=llm, reporter=reporter)
    seconds = time.perf_counter() - started
    size = len(json.dumps(to_json(graph)).encode("utf-8"))
    per = 1000 / max(len(graph.chunk_ids), 1)
    return graph, {
        "extractor": extractor,
        "reporter": reporter,
        "chunks": len(graph.chunk_ids),
        "entities": len(graph.keys),
        "relations": len(graph.relations),
        "communities": [len(level) for level in graph.communities],
        "reports": len(graph.reports),
        "llm_calls": graph.rebuilt["llm_calls"],
        "report_llm_calls": graph.rebuilt["report_llm_calls"],
        "tokens": graph.rebuilt["tokens"],
        "fallbacks": graph.rebuilt["fallbacks"],  # replies that were no JSON: the rules extractor read the chunk
        "seconds": round(seconds, 3),
        "seconds_per_1000_chunks": round(seconds * per, 3),
        "llm_calls_per_1000_chunks": round(graph.rebuilt["llm_calls"] * per, 1),
        "tokens_per_1000_chunks": round(graph.rebuilt["tokens"] * per),
        "bytes_per_1000_chunks": round(size * per),
    }


@register("experiment", "graph")
def experiment() -> Experiment:
    """BM25 vs personalized PageRank vs the entity graph's local and global search on Orrin with its aggregate
    questions, per question type."""
    from ragline.eval.experiments import llm_of

    def from_args(args: Any) -> dict[str, Any]:
        llm = llm_of(args) if args.llm_chunks else None
        return run(args.seed, args.retriever or RETRIEVERS, llm=llm, llm_chunks=args.llm_chunks)

    return Experiment("graph", from_args)
