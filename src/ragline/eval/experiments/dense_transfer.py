"""Dense retrieval on paraphrases it was not trained for (Lecture 12 §3.3): BM25 vs dense vs hybrid.

The notes train a toy dual encoder on the training world's questions with the paraphrases of five
relations (capital, language, founded, river, job) removed, and find it far below BM25 on those
"unseen" paraphrases (23.5% vs 48.0% R@1). ragline's embedders are pretrained on general text pairs
and never saw either countries world, so here no relation is seen in training: the split into the
notes' held-out relations and the rest measures whether the general model knows the synonyms
("waterway" for river, "tongue" for language) that the toy model had to learn from data.

Question types are ``direct/held-out``, ``paraphrase/held-out``, ``direct/seen``, ``paraphrase/seen``
(the relation read off the question's gold fact), plus multihop and arithmetic. On ``--dataset`` the
three retrievers are compared by the dataset's own types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from ragline.components import register
from ragline.eval.experiments import Experiment, Query, Workload, configs_of, load_workload, score_by_type

# The relations whose paraphrase questions the notes leave out of training ("job" has no counterpart here).
HELD_OUT = frozenset({"capital", "language", "founded", "river"})
RETRIEVERS = ("bm25", "dense", "hybrid")


def relation_of(fact_id: str) -> str:
    """The relation of a countries fact id (``country-001-geography#capital`` -> ``capital``)."""
    return fact_id.rsplit("#", 1)[-1]


def countries_workload(embedder: str | None) -> Workload:
    """The countries evaluation world, whole documents; direct and paraphrase questions typed by
    whether their relation is one the notes hold out."""
    from ragline.corpora.countries import build_countries
    from ragline.index import Index, IndexSettings

    corpus = build_countries()
    index = Index.create(None, IndexSettings(embedder=embedder, vector_index="flat"))
    index.add(corpus.documents)
    index.commit()
    relation = {(f.doc_id, f.sentence): relation_of(f.fact_id) for f in corpus.facts}
    queries = []
    for q in corpus.questions:
        kind = q.type
        if q.type in ("direct", "paraphrase"):
            held = relation.get(q.evidence[-1]) in HELD_OUT
            kind = f"{q.type}/{'held-out' if held else 'seen'}"
        queries.append(Query(q.id, q.text, kind, frozenset(q.gold_doc_ids)))
    return Workload(corpus.name, index, queries, {})


def retriever_ranker(index: Any, spec: Any) -> Any:
    from ragline.retrieve.registry import build_retriever

    retriever = build_retriever(spec, index)
    return lambda query, k, flt: [(h.doc_id, h.score) for h in retriever.search(query, k, flt)]


def run(workload: Workload, retrievers: Sequence[Any] = RETRIEVERS, pipelines: Sequence[Any] = ()) -> dict[str, Any]:
    """Each retriever spec, then each ``PipelineConfig`` of ``pipelines`` as a whole (its transforms,
    reranker and BM25 settings too), as the row ``config NAME``."""
    from ragline.answer.pipeline import RAGPipeline

    by_retriever = {}
    for spec in retrievers:
        name = spec if isinstance(spec, str) else str(spec.get("name", spec))
        by_retriever[name] = score_by_type(workload, retriever_ranker(workload.index, spec), depth=10)
    for config in pipelines:
        # A config's row is its name: two configs with the same retriever spec stay two rows.
        pipeline = RAGPipeline.from_config(config, workload.index, reader=False)
        by_retriever[f"config {config.name}"] = score_by_type(workload, pipeline.rank, depth=10)
    return {
        "experiment": "dense-transfer",
        "corpus": workload.name,
        "queries": len(workload.queries),
        "held_out_relations": sorted(HELD_OUT),
        "by_retriever": by_retriever,
    }


def tables(payload: dict[str, Any]) -> list[Table]:
    rows = payload["by_retriever"]
    types = sorted(next(iter(rows.values())), key=lambda t: (t == "all", t))
    table = Table(
        title=f"Dense transfer on {payload['corpus']} ({payload['queries']} questions): "
        "Hit@1 / Recall@10 (all gold documents) by question type"
    )
    for column in ("retriever", *(f"{t} (n={rows[next(iter(rows))][t]['n']})" for t in types)):
        table.add_column(column, justify="left" if column == "retriever" else "right")
    for name, scores in rows.items():
        table.add_row(name, *(f"{scores[t]['hit@1']:.2f} / {scores[t]['recall@10']:.2f}" for t in types))
    return [table]


def from_args(args: Any) -> dict[str, Any]:
    """--dataset's workload (else the countries world's) with the default retrievers and each --config."""
    workload = (
        load_workload(args.dataset, args.embedder, args.limit) if args.dataset else countries_workload(args.embedder)
    )
    return run(workload, RETRIEVERS, pipelines=configs_of(args))


@register("experiment", "dense-transfer")
def experiment() -> Experiment:
    """BM25 vs dense vs hybrid on the relations the lecture holds out."""
    return Experiment("dense-transfer", from_args, tables, configs=True)
