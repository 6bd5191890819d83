"""RAPTOR against plain retrieval and the agent, per question type, at an equal passage budget (issue 28).

The world (an Orrin world by seed, with its aggregate/global questions appended,
``ragline.corpora.aggregate``) is chunked and embedded as ``pipelines/default.toml`` does
(sentence-packed chunks, MiniLM). Every arm hands the reader at most ``k`` chunks:

    hybrid              the default first stage, top k
    agent               the multi-hop agent (hybrid ladder, two hops, ``budget_passages = k``)
    raptor              RAPTOR collapsed tree (extractive summaries; a summary stands for the chunks it quotes)
    raptor-sources      collapsed, a summary standing for every chunk below it
    raptor-traversal    RAPTOR from the roots down, beam 3
    raptor-umap         collapsed, with UMAP before the mixture

    global-search       GraphRAG global search (``--retriever global-search``): a reader that retrieves by
                        itself, mapping over community reports; its answer comes from its own reduce reader
                        (``aggregate`` unless ``reader=`` says otherwise), so compare it with ``--reader aggregate``

With ``reader`` (``--reader SPEC``), the same reader reads every arm's passages for each aggregate
question; **answered** counts the right answers (a listing must name every item; a count, a name or a
value must occur in the answer), compared with hybrid's by the same test; ``read_per_type`` keeps only
the first questions of each aggregate type, a sample for a slow reader.

A question counts as **complete** when every one of its evidence sentences (all the documents an
aggregate answer needs, one sentence each) lies inside the k chunks: what any reader needs to answer
it, whichever reader it is. ``gold recall`` is the share of gold documents with a chunk in the k.
Each arm is compared with ``hybrid`` on ``complete`` by the paired randomization test, over the
aggregate types (comparison, listing, counting, theme) and over every type.

The cost table gives, per 1,000 chunks, the seconds, LLM calls and tokens of building each tree and
its size (nodes, bytes of summaries and vectors); ``llm_chunks`` > 0 also builds a tree with
``summarizer=llm`` over that many chunks (a small sample: the local LLM on a CPU) for its cost.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

from rich.table import Table

from ragline.components import register
from ragline.config import load_config
from ragline.corpora.aggregate import AGGREGATE_TYPES, with_aggregate
from ragline.corpora.orrin import DEFAULT_SEED, build_orrin
from ragline.eval.experiments import Experiment, llm_of
from ragline.eval.stats import compare
from ragline.ingest.pipeline import IngestConfig, build_index

ARMS = {
    "hybrid": "hybrid",
    "raptor": "raptor:mode=collapsed",
    "raptor-sources": "raptor:mode=collapsed,expand=sources",
    "raptor-traversal": "raptor:mode=traversal,beam=3",
    "raptor-umap": "raptor:mode=collapsed,reduce=umap",
}
DEFAULT_K = 10


def _index(corpus: Any, embedder: str) -> Any:
    config = load_config("default")
    settings = dataclasses.replace(config.index.settings(embed=True), embedder=embedder)
    return build_index(corpus.documents, IngestConfig(config.ingest.chunker, config.ingest.context), settings)


def _score(question: Any, texts: list[str], parents: list[str]) -> dict[str, float]:
    joined = "\n".join(texts)
    gold = set(question.gold_doc_ids)
    return {
        "complete": float(all(sentence in joined for _, sentence in question.evidence)),
        "gold_recall": len(gold & set(parents)) / len(gold) if gold else 0.0,
    }


def _measure(question: Any, hits: list[Any], read: Any) -> dict[str, float]:
    """``_score`` of the hits, and for an aggregate question with a reader, whether the reader's answer is right."""
    scores = _score(question, [h.text for h in hits], [h.parent or h.doc_id for h in hits])
    if read is not None and question.type in AGGREGATE_TYPES:
        from ragline.answer.context import build_context

        scores["answered"] = float(aggregate_correct(question, read.read(question.text, build_context(hits)).text))
    return scores


def aggregate_correct(question: Any, text: str) -> bool:
    """A listing is right when it names every item; any other answer when it contains the answer or an alias."""
    from ragline.eval.answers import contains_answer

    if question.type == "listing":
        return all(contains_answer(text, [item]) for item in question.answer.split("; "))
    return contains_answer(text, question.answers) is not None


def _global_search(index: Any, spec: str, questions: list[Any], judged: bool) -> tuple[dict[str, Any], float]:
    """The ``global-search`` reader's answers (its reduce step's reader, ``aggregate`` by default) and sources."""
    from ragline.components import build

    runner, started, scores = build("reader", spec, index=index), time.perf_counter(), {}
    for q in questions:
        answer, context = runner.answer(q.text, _acl(q.user_groups))
        scores[q.id] = _measure(q, [s.hit for s in context.sources], None)
        if judged and q.type in AGGREGATE_TYPES:
            scores[q.id]["answered"] = float(aggregate_correct(q, answer.text))
    return scores, time.perf_counter() - started


def _agent(index: Any, k: int) -> Any:
    from ragline.agent.loop import AgentSettings, MultiHopAgent

    split = (k - k // 2, k // 2)
    return MultiHopAgent(
        index, AgentSettings(ladder=("hybrid",), hop_k=split, budget_passages=k, max_hops=2, retries=0, budget=100_000)
    )


def _tree_cost(index: Any, spec: str, llm: Any = None, limit: int | None = None) -> dict[str, Any]:
    from ragline.components import spec_of
    from ragline.structures.raptor_build import build_tree
    from ragline.structures.raptor_tree import RaptorParams

    _, params = spec_of(spec)
    params.pop("mode", None), params.pop("beam", None)
    target = index
    if limit:
        target = build_index(list(index.documents())[:limit], IngestConfig("none", "none"), index.settings)
    return _cost_row(spec, build_tree(target, RaptorParams.of(params), llm=llm))


def _cost_row(spec: str, tree: Any) -> dict[str, Any]:
    chunks = sum(1 for n in tree.nodes if n.level == 0)
    size = tree.vectors.nbytes + sum(len(json.dumps([n.text, n.sources, n.quoted])) for n in tree.nodes)
    per = 1000 / max(chunks, 1)
    return {
        "arm": spec,
        "chunks": chunks,
        "nodes": len(tree.nodes),
        "levels": tree.levels(),
        "seconds_per_1000": round(tree.cost["seconds"] * per, 1),
        "llm_calls_per_1000": round(tree.cost["llm_calls"] * per, 1),
        "tokens_per_1000": round(tree.cost["tokens"] * per),
        "bytes_per_1000": round(size * per),
        **{key: tree.work[key] for key in ("llm_summaries_kept", "llm_summaries_extractive") if key in tree.work},
    }


def run(
    seed: int = DEFAULT_SEED,
    arms: dict[str, str] | None = None,
    k: int = DEFAULT_K,
    agent: bool = True,
    embedder: str = "minilm",
    llm: Any = None,
    llm_chunks: int = 0,
    reader: str | None = None,
    read_per_type: int = 0,
) -> dict[str, Any]:
    from ragline.answer.pipeline import build_reader
    from ragline.components import build

    read = build_reader(reader) if reader else None

    corpus = with_aggregate(build_orrin(seed))
    corpus.questions = [q for q in corpus.questions if not q.expected_abstain]  # nothing to find: the ACL tests
    index = _index(corpus, embedder)
    arms = dict(arms or ARMS)
    if read_per_type:  # read only the first questions of each aggregate type (a sample for a slow reader)
        keep = {t: [q.id for q in corpus.questions if q.type == t][:read_per_type] for t in AGGREGATE_TYPES}
        corpus.questions = [q for q in corpus.questions if q.type not in AGGREGATE_TYPES or q.id in keep[q.type]]
    per_arm: dict[str, dict[str, dict[str, float]]] = {}
    seconds: dict[str, float] = {}
    trees: dict[Any, Any] = {}  # one tree per build parameters, shared by the arms that only search it otherwise
    costs = []
    for label, spec in arms.items():
        if spec.split(":")[0] == "global-search":  # a reader that retrieves: its own map-reduce answer is read
            per_arm[label], seconds[label] = _global_search(index, spec, corpus.questions, read is not None)
            continue
        retriever = build("retriever", spec, index=index)
        params = getattr(retriever, "params", None)
        if params is not None:
            if params in trees:
                retriever._tree, retriever._generation = trees[params], index.generation
            else:
                trees[params] = retriever.tree
                costs.append(_cost_row(spec, trees[params]))
        started = time.perf_counter()
        scores = {}
        for q in corpus.questions:
            scores[q.id] = _measure(q, retriever.search(q.text, k, _acl(q.user_groups)), read)
        per_arm[label], seconds[label] = scores, time.perf_counter() - started
    if agent:
        runner, started, scores = _agent(index, k), time.perf_counter(), {}
        for q in corpus.questions:
            _, context = runner.answer(q.text, _acl(q.user_groups))
            scores[q.id] = _measure(q, [s.hit for s in context.sources], read)
        per_arm["agent"], seconds["agent"] = scores, time.perf_counter() - started
    types = list(dict.fromkeys(q.type for q in corpus.questions))
    groups = {
        **{t: [q.id for q in corpus.questions if q.type == t] for t in types},
        "aggregate": [q.id for q in corpus.questions if q.type in AGGREGATE_TYPES],
        "all": [q.id for q in corpus.questions],
    }
    rows = []
    for label, scores in per_arm.items():
        row: dict[str, Any] = {
            "arm": label,
            "spec": arms.get(label, "agent:ladder=hybrid"),
            "seconds_per_question": round(seconds[label] / len(corpus.questions), 3),
        }
        for group, ids in groups.items():
            row[group] = {
                "n": len(ids),
                "complete": sum(scores[i]["complete"] for i in ids),
                "gold_recall": round(sum(scores[i]["gold_recall"] for i in ids) / max(len(ids), 1), 3),
            }
            if read is not None and group == "aggregate":
                row[group]["answered"] = sum(scores[i]["answered"] for i in ids)
        if label != "hybrid":
            for group in ("aggregate", "all"):
                base = {i: per_arm["hybrid"][i]["complete"] for i in groups[group]}
                test = compare(base, {i: scores[i]["complete"] for i in groups[group]})
                row[f"vs_hybrid_{group}"] = {"delta": round(test["delta"], 3), "p": round(test["p_randomization"], 4)}
            if read is not None:
                base = {i: per_arm["hybrid"][i]["answered"] for i in groups["aggregate"]}
                test = compare(base, {i: scores[i]["answered"] for i in groups["aggregate"]})
                row["answered_vs_hybrid"] = {"delta": round(test["delta"], 3), "p": round(test["p_randomization"], 4)}
        rows.append(row)
    if llm_chunks:
        costs.append(_tree_cost(index, "raptor:summarizer=llm", llm=llm, limit=llm_chunks))
    return {
        "experiment": "raptor",
        "corpus": corpus.name,
        "seed": seed,
        "chunks": len(index),
        "k": k,
        "reader": reader,
        "read_per_type": read_per_type,
        "questions": len(corpus.questions),
        "types": [*types, "aggregate", "all"],
        "rows": rows,
        "costs": costs,
    }


def _acl(groups: list[str]) -> Any:
    from ragline.index.filters import acl_filter

    return acl_filter(groups)


def tables(payload: dict[str, Any]) -> list[Table]:
    types = payload["types"]
    title = (
        f"RAPTOR on {payload['corpus']} ({payload['chunks']} chunks, {payload['k']} per question): questions "
        "with every evidence sentence in the context, by type; p: randomization vs hybrid"
    )
    table = Table(title=title)
    answers = [f"answered ({payload['reader']})", "answered vs hybrid"] if payload.get("reader") else []
    for column in ("arm", *types, "aggregate vs hybrid", *answers, "s/question"):
        table.add_column(column, justify="left" if column == "arm" else "right")
    for row in payload["rows"]:
        versus, read = row.get("vs_hybrid_aggregate"), row.get("answered_vs_hybrid")
        cells = (
            [
                f"{row['aggregate']['answered']:.0f}/{row['aggregate']['n']}",
                f"{read['delta']:+.3f} (p {read['p']:.3f})" if read else "—",
            ]
            if answers
            else []
        )
        table.add_row(
            row["arm"],
            *(f"{row[t]['complete']:.0f}/{row[t]['n']}" for t in types),
            f"{versus['delta']:+.3f} (p {versus['p']:.3f})" if versus else "—",
            *cells,
            f"{row['seconds_per_question']:.2f}",
        )
    cost = Table(title="Building the tree, per 1,000 chunks")
    for column in ("arm", "chunks", "nodes", "seconds", "LLM calls", "tokens", "bytes"):
        cost.add_column(column, justify="left" if column == "arm" else "right")
    for c in payload["costs"]:
        cost.add_row(
            c["arm"],
            str(c["chunks"]),
            str(c["nodes"]),
            str(c["seconds_per_1000"]),
            str(c["llm_calls_per_1000"]),
            str(c["tokens_per_1000"]),
            str(c["bytes_per_1000"]),
        )
    return [table, cost]


def from_args(args: Any) -> dict[str, Any]:
    """Orrin (--seed) with its aggregate questions; the --retriever arms (and --global-search), --llm-chunks, the
    first --reader."""
    from ragline.corpora.orrin import DEFAULT_SEED

    arms: dict[str, str] | None = {spec: spec for spec in args.retriever} if args.retriever else None
    if getattr(args, "global_search", None):
        arms = {**(arms or ARMS), args.global_search: args.global_search}
    return run(
        args.seed if args.seed is not None else DEFAULT_SEED,
        arms,
        embedder=args.embedder,
        llm=llm_of(args) if args.llm_chunks else None,
        llm_chunks=args.llm_chunks,
        reader=args.reader[0] if args.reader else None,
        read_per_type=args.read_per_type,
    )


@register("experiment", "raptor")
def experiment() -> Experiment:
    """Hybrid vs the agent vs RAPTOR (collapsed, traversal, UMAP) per question type on Orrin with its aggregate
    questions, 10 passages each: questions with all evidence in the context; the tree's cost per 1,000 chunks."""
    return Experiment("raptor", from_args, tables)
