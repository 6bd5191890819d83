"""``ragline eval DATASET``: retrieval metrics with paired tests, or graded answers for a QA set."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline.cli.common import (
    add_analysis_flags,
    add_bm25_flags,
    add_common,
    add_config_flag,
    default_metrics,
    emit_json,
    positive_int,
    report_embeddings,
    resolve_config,
)
from ragline.config import IngestStage, PipelineConfig, ReadStage, RetrieveStage
from ragline.errors import ConfigError, RaglineError
from ragline.index import Index
from ragline.progress import stderr
from ragline.provenance import provenance as make_provenance

# `ragline eval` without --config: whole documents, BM25, no reader (the BENCHMARKS.md baselines).
EVAL_BASE = PipelineConfig(
    name="eval",
    ingest=IngestStage(chunker="none", context="none"),
    retrieve=RetrieveStage(retriever="bm25"),
    read=ReadStage(reader="none"),
)


def cmd_eval(args: argparse.Namespace) -> int:
    from ragline.eval.datasets import load_dataset
    from ragline.eval.harness import build_eval_index, evaluate_retrieval, paired_comparisons

    config = resolve_config(args, EVAL_BASE)
    specs = args.retriever or [config.retrieve.retriever]
    configs = [config.with_overrides(retrieve={"retriever": spec}) for spec in specs]
    if args.judge and not config.read.enabled:
        raise ConfigError("--judge checks the citations of answers: give a --reader too")
    with stderr.status(f"loading {args.dataset}"):
        dataset = load_dataset(args.dataset, args.split)
    answers = config.read.enabled and (bool(dataset.questions) or bool(args.reader))
    if answers and not dataset.questions:
        raise RaglineError(f"{dataset.path} has no questions.jsonl: answer evaluation needs questions with answers")
    with stderr.status(f"indexing {len(dataset.corpus)} documents ({config.ingest.chunker}, {config.ingest.context})"):
        built = build_eval_index(dataset, configs[:1] if answers else configs)
    report_embeddings(built.index)
    if answers:
        return _eval_answers(args, dataset, built.index, configs[0])
    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    results = evaluate_retrieval(dataset, configs, built, metrics, args.depth)
    if args.save_run:
        from ragline.eval.trec import write_run

        write_run(results[0].run, args.save_run, tag=str(specs[0]).partition(":")[0])
    labels = [str(spec) for spec in specs]
    provenance = make_provenance(
        config if len(configs) == 1 else [c.to_dict() for c in configs],
        dataset_path=str(dataset.path),
        dataset_hash=dataset.hash,
        split=args.split,
        depth=args.depth,
        ingest=built.ingest.to_dict(),
        retriever=results[0].retriever if len(specs) == 1 else [r.retriever for r in results],
    )
    head = {"dataset": dataset.name, "split": args.split, "queries": len(dataset.judged_queries)}
    comparisons = paired_comparisons(labels, results, metrics)
    if args.output == "json":
        if len(specs) == 1:
            emit_json({**head, "retriever": labels[0], "metrics": results[0].metrics, "provenance": provenance})
        else:
            listed = [{"retriever": label, "metrics": r.metrics} for label, r in zip(labels, results)]
            emit_json({**head, "results": listed, "comparisons": comparisons, "provenance": provenance})
        return 0
    table = Table(title=Text(f"{dataset.name} ({args.split}, {head['queries']} judged queries)"))
    table.add_column("metric")
    for label in labels:
        table.add_column(Text(label), justify="right")
    for m in metrics:
        table.add_row(m, *(f"{result.metrics[m]:.4f}" for result in results))
    Console().print(table)
    for c in comparisons:
        Console().print(
            Text(
                f"{c['retriever']} vs {c['baseline']} on {c['metric']}: delta {c['delta']:+.4f} "
                f"(95% CI {c['ci'][0]:+.4f}..{c['ci'][1]:+.4f}), p = {c['p_randomization']:.4f} (randomization), "
                f"{c['p_t_test']:.4f} (t-test), d = {c['effect_size']:.2f}, n = {c['n']}"
            )
        )
    return 0


def _eval_answers(args: argparse.Namespace, dataset: Any, index: Index, config: PipelineConfig) -> int:
    from ragline.answer.pipeline import RAGPipeline
    from ragline.eval.qa import QAQuestion, evaluate_answers, sample_questions

    questions = [QAQuestion.from_record(r) for r in dataset.questions]
    if args.types:
        wanted = {t.strip() for t in args.types.split(",") if t.strip()}
        questions = [q for q in questions if q.type in wanted]
        if not questions:
            raise ConfigError(f"--types {args.types}: no question of these types in {dataset.path}")
    questions = sample_questions(questions, args.sample, args.seed)
    pipeline = RAGPipeline.from_config(config, index)
    judge = None
    if args.judge:
        from ragline.answer.judge import SupportJudge
        from ragline.models.llm import CachedLLM, load_llm

        judge = SupportJudge(CachedLLM(load_llm(None if args.judge == "default" else args.judge)))
    try:
        summary, _ = evaluate_answers(pipeline, questions, match=args.match, judge=judge)
    finally:
        if judge is not None:
            judge.llm.close()
    reader, retriever = str(config.read.reader), str(config.retrieve.retriever)
    payload = {"dataset": dataset.name, "questions": len(questions), "reader": reader, "retriever": retriever,
               "judge": judge.id if judge else None, "summary": summary,
               "provenance": make_provenance(config, dataset_hash=dataset.hash, sample=args.sample, seed=args.seed,
                                             match=args.match, types=args.types, **pipeline.config())}  # fmt: skip
    if args.output == "json":
        emit_json(payload)
        return 0
    table = Table(title=Text(f"{dataset.name}: {len(questions)} questions, {reader} over {retriever}"))
    for column in ("type", "n", "correct", "wrong", "abstained"):
        table.add_column(column, justify="left" if column == "type" else "right")
    for qtype, row in [*summary["by_type"].items(), ("all", {**summary["counts"], "n": summary["n"]})]:
        table.add_row(qtype, str(row["n"]), str(row["correct"]), str(row["wrong"]), str(row["abstained"]))
    Console().print(table)
    rates = {k: summary[k] for k in ("em", "f1", "abstention_rate", "citation_precision", "leaks")}
    if judge is not None:
        rates |= {k: summary[k] for k in ("judge_precision", "judge_agreement", "judge_undecided")}
    Console().print("  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in rates.items()))
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="measure retrieval on a BEIR folder or a questions folder",
        description="Index the dataset's corpus in memory, run its judged queries and score them. With "
        "--config (or --reader) and a questions.jsonl, answer its questions and grade the answers instead.",
    )
    p.add_argument("dataset", help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) or questions folder")
    p.add_argument(
        "--retriever",
        action="append",
        default=None,
        metavar="SPEC",
        help="retriever to evaluate, repeatable; the first is the baseline of the paired comparisons. "
        "SPEC is NAME[:key=value,...]: bm25[:k1=0.9,b=0.4,variant=lucene], dense, "
        "hybrid[:fuser=z_score|min_max|rrf|weighted_sum|sum,depth=100,k=60,weights=0.5/0.5] (default bm25)",
    )
    p.add_argument("--split", default="test", help="qrels split (test)")
    p.add_argument("--metrics", default=",".join(default_metrics()), help="comma-separated metric names")
    p.add_argument("--depth", type=positive_int, default=1000, help="documents retrieved per query (1000)")
    p.add_argument("--save-run", metavar="FILE", help="write the run in TREC format")
    p.add_argument(
        "--chunker",
        metavar="SPEC",
        help="index chunks, a document scoring as its best chunk: fixed:size=128, structure:max_words=200, ... "
        "(default: the config's; without --config, none = whole documents)",
    )
    p.add_argument(
        "--context", choices=("none", "breadcrumb", "late", "llm"), help="chunk context (default: the config's, none)"
    )
    g = p.add_argument_group(
        "answer evaluation (needs questions.jsonl): retrieve with the first --retriever, read, grade"
    )
    g.add_argument(
        "--reader",
        metavar="SPEC",
        help="extractive[:threshold=..,support=best|next|off] or llm[:model=...,max_tokens=..]",
    )
    g.add_argument("-k", type=positive_int, help="sources given to the reader (default: the config's, 5)")
    g.add_argument("--order", choices=("rank", "ends", "reverse"), help="source order (default: the config's, rank)")
    g.add_argument("--types", metavar="TYPES", help="only questions of these types (comma-separated, e.g. multihop)")
    g.add_argument("--sample", type=positive_int, help="N answerable + N unanswerable questions (default: all)")
    g.add_argument("--seed", type=int, default=0, help="sampling seed (0)")
    g.add_argument(
        "--match",
        choices=("em", "contains"),
        default="em",
        help="em: SQuAD exact match (span readers); contains: the gold answer inside a sentence (LLMs)",
    )
    g.add_argument(
        "--judge",
        metavar="LLM",
        help="also ask this LLM (a spec as for --reader llm:model=..., or 'default') whether each citation "
        "supports its answer: judge_precision, and judge_agreement with the lexical check",
    )
    add_analysis_flags(p)
    add_bm25_flags(p)
    add_config_flag(p, "whole documents, bm25, no reader")
    add_common(p, index=False)
    p.set_defaults(func=cmd_eval)
