"""``ragline eval DATASET``: retrieval metrics with paired tests, or graded answers for a QA set."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline.cli.common import (
    add_analysis_flags,
    add_bm25_flags,
    add_common,
    add_config_flag,
    component_help,
    component_spec,
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
from ragline.store.uri import redacted_uri

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
    from ragline.eval.trec import check_run_target, write_run

    config = resolve_config(args, EVAL_BASE)
    specs = args.retriever or [config.retrieve.retriever]
    configs = [config.with_overrides(retrieve={"retriever": spec}) for spec in specs]
    if args.judge and not config.read.enabled:
        raise ConfigError("--judge checks the citations of answers: give a --reader too")
    run_files = run_file_names(args.save_run, len(specs)) if args.save_run else []
    for path, spec in zip(run_files, specs):  # now, not after an evaluation that could not be saved
        check_run_target(path, _run_tag(spec))
    if args.save_answers:
        _check_output_file(args.save_answers, "--save-answers")
    with stderr.status(f"loading {args.dataset}"):
        dataset = load_dataset(args.dataset, args.split)
    answers = config.read.enabled and (bool(dataset.questions) or bool(args.reader))
    if answers and not dataset.questions:
        raise RaglineError(f"{dataset.path} has no questions.jsonl: answer evaluation needs questions with answers")
    if answers and args.save_run:
        raise ConfigError("--save-run writes the run of the judged queries; with a reader, use --save-answers")
    if args.save_answers and not answers:
        raise ConfigError("--save-answers writes graded answers: give a --reader (or a --config with one)")
    if args.types and not answers:  # retrieval: judge only the queries whose question has one of the types
        from ragline.eval.datasets import only_types

        dataset = only_types(dataset, _wanted_types(args))
    if args.per_question_context and not dataset.questions:
        raise ConfigError(f"--per-question-context needs {dataset.path}/questions.jsonl with context_ids")
    metrics = tuple(m.strip() for m in (args.metrics or ",".join(default_metrics())).split(",") if m.strip())
    if args.store:
        if answers or args.per_question_context:
            raise ConfigError("--store evaluates retrieval through a collection (no --reader, --per-question-context)")
        from ragline.store.evaluate import evaluate_on_store

        results = [evaluate_on_store(dataset, c, args.store, metrics, args.depth) for c in configs]
        ingest = {"chunker": config.ingest.chunker, "context": config.ingest.context}
    else:
        chunking = f"{config.ingest.chunker}, {config.ingest.context}"
        with stderr.status(f"indexing {len(dataset.corpus)} documents ({chunking})"):
            built = build_eval_index(dataset, configs[:1] if answers else configs)
        report_embeddings(built.index)
        if answers:
            return _eval_answers(args, dataset, built.index, configs[0])
        filters = _context_filters(dataset) if args.per_question_context else None
        results = evaluate_retrieval(dataset, configs, built, metrics, args.depth, filters)
        ingest = built.ingest.to_dict()
    for path, spec, result in zip(run_files, specs, results):
        write_run(result.run, path, tag=_run_tag(spec))
        stderr.print(f"run of {spec} written to {path}", highlight=False)
    labels = [str(spec) for spec in specs]
    provenance = make_provenance(
        config if len(configs) == 1 else [c.to_dict() for c in configs],
        dataset_path=str(dataset.path),
        dataset_hash=dataset.hash,
        split=args.split,
        depth=args.depth,
        ingest=ingest,
        store=redacted_uri(args.store) if args.store else None,  # never the password
        retriever=results[0].retriever if len(specs) == 1 else [r.retriever for r in results],
    )
    head = {
        "dataset": dataset.name,
        "split": args.split,
        "queries": len(dataset.judged_queries),
        "types": args.types,
        "per_question_context": bool(args.per_question_context),
    }
    comparisons = paired_comparisons(labels, results, metrics)
    if args.output == "json":
        saved = [{"run": path} for path in run_files] or [{} for _ in results]
        if len(specs) == 1:
            emit_json(
                {**head, "retriever": labels[0], "metrics": results[0].metrics, **saved[0], "provenance": provenance}
            )
        else:
            listed = [{"retriever": label, "metrics": r.metrics, **f} for label, r, f in zip(labels, results, saved)]
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


def run_file_names(path: str, n: int) -> list[str]:
    """Where ``--save-run FILE`` writes the runs of ``n`` retrievers: FILE itself for one; for several,
    FILE.1.trec, FILE.2.trec, ... in ``--retriever`` order (a ``.trec`` ending of FILE is not repeated)."""
    if n == 1:
        return [path]
    stem = path.removesuffix(".trec")
    return [f"{stem}.{i}.trec" for i in range(1, n + 1)]


def _run_tag(spec: Any) -> str:
    return str(spec).partition(":")[0]


def _check_output_file(path: str, flag: str) -> None:
    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"{flag} {path}: it is a directory; give a file name")
    if not target.parent.is_dir():
        raise ConfigError(f"{flag} {path}: no directory {target.parent}; create it first")


def _context_filters(dataset: Any) -> dict[str, Any]:
    """Query id -> its question's own passages, for the judged queries whose question has ``context_ids``."""
    from ragline.eval.qa import QAQuestion

    questions = [QAQuestion.from_record(r) for r in dataset.questions or []]
    _warn_missing_context(questions, dataset)
    filters = {q.id: q.context_filter() for q in questions if q.context_ids is not None}
    without = [qid for qid in dataset.judged_queries if qid not in filters]
    if without:
        stderr.print(
            f"warning: {len(without)} judged queries have no question with context_ids (e.g. "
            f"{without[0]!r}): they are searched over the whole corpus",
            highlight=False,
        )
    return filters


def _warn_missing_context(questions: list[Any], dataset: Any) -> None:
    from ragline.eval.qa import missing_context_ids

    missing = missing_context_ids(questions, {d.id for d in dataset.corpus})
    if missing:
        qid, ids = next(iter(missing.items()))
        stderr.print(
            f"warning: {len(missing)} questions of {dataset.path} name context_ids that are not in "
            f"its corpus (e.g. {qid!r}: {ids[:3]}): they cannot be found",
            highlight=False,
        )


def _wanted_types(args: argparse.Namespace) -> set[str]:
    return {t.strip() for t in args.types.split(",") if t.strip()}


def _eval_answers(args: argparse.Namespace, dataset: Any, index: Index, config: PipelineConfig) -> int:
    from ragline.answer.pipeline import RAGPipeline
    from ragline.eval.qa import QAQuestion, answer_questions, sample_questions, summarize_results

    questions = [QAQuestion.from_record(r) for r in dataset.questions]
    if args.types:
        wanted = _wanted_types(args)
        questions = [q for q in questions if q.type in wanted]
        if not questions:
            raise ConfigError(f"--types {args.types}: no question of these types in {dataset.path}")
    questions = sample_questions(questions, args.sample, args.seed)
    if args.per_question_context:
        if not any(q.context_ids is not None for q in questions):
            raise ConfigError(f"--per-question-context: no question of {dataset.path} has context_ids (or context_id)")
        _warn_missing_context(questions, dataset)
    pipeline = RAGPipeline.from_config(config, index)
    judge = None
    if args.judge:
        from ragline.answer.judge import SupportJudge
        from ragline.models.llm import CachedLLM, load_llm

        judge = SupportJudge(CachedLLM(load_llm(None if args.judge == "default" else args.judge)))
    results = []
    try:
        with open(args.save_answers or os.devnull, "w", encoding="utf-8") as saved:
            for result in answer_questions(pipeline, questions, args.match, judge, args.per_question_context):
                results.append(result)
                # Line by line, so that an interrupted run keeps what it answered.
                saved.write(json.dumps(result.to_record(), ensure_ascii=False, default=str) + "\n")
                saved.flush()
    finally:
        if judge is not None:
            judge.llm.close()
    summary = summarize_results(results)
    reader, retriever = str(config.read.reader), str(config.retrieve.retriever)
    payload = {
        "dataset": dataset.name,
        "questions": len(questions),
        "reader": reader,
        "retriever": retriever,
        "judge": judge.id if judge else None,
        "summary": summary,
        "answers_file": args.save_answers,
        "provenance": make_provenance(
            config,
            dataset_hash=dataset.hash,
            sample=args.sample,
            seed=args.seed,
            match=args.match,
            types=args.types,
            per_question_context=args.per_question_context,
            **pipeline.config(),
        ),
    }
    if args.output == "json":
        emit_json(payload)
        return 0
    table = Table(title=Text(f"{dataset.name}: {len(questions)} questions, {reader} over {retriever}"))
    columns = ["type", "n", "correct", "wrong", "abstained"] + (["misled"] if summary["n_with_distractors"] else [])
    for column in columns:
        table.add_column(column, justify="left" if column == "type" else "right")
    overall = {**summary["counts"], "n": summary["n"], "misled": summary["misled"]}
    for qtype, row in [*summary["by_type"].items(), ("all", overall)]:
        table.add_row(qtype, *(str(row[c]) for c in columns[1:]))
    Console().print(table)
    rates = {k: summary[k] for k in ("em", "f1", "abstention_rate", "citation_precision", "leaks")}
    if summary["n_with_distractors"]:
        rates["misled_rate"] = summary["misled_rate"]
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
        type=component_spec("retriever"),
        help=component_help(
            "retriever",
            "retriever to evaluate, repeatable; the first is the baseline of the paired comparisons. SPEC is "
            "NAME[:key=value,...]: bm25[:k1=0.9,b=0.4,variant=lucene], dense, hybrid[:fuser=z_score|rrf|...,"
            "depth=100,weights=0.5/0.5] (default bm25)",
        ),
    )
    p.add_argument("--split", default="test", help="qrels split (test)")
    # No default here: the metric list lives in ragline.eval, whose import (scipy) would slow every command.
    p.add_argument("--metrics", help="comma-separated metric names (default: ndcg@10, recall@100, mrr@10, ...)")
    p.add_argument("--depth", type=positive_int, default=1000, help="documents retrieved per query (1000)")
    p.add_argument(
        "--store",
        metavar="URI",
        help="evaluate through a Milvus collection, milvus://[user:password@]HOST:PORT/NAME (indexed from the "
        "dataset, reused when its chunks and stamps are unchanged); retrievers: bm25, dense, hybrid",
    )
    p.add_argument(
        "--save-run",
        metavar="FILE",
        help="write the run in TREC format (ids with spaces or %% percent-encoded, read back by ragline as they "
        "were): one --retriever to FILE, several to FILE.1.trec, FILE.2.trec, ... (listed in --output json)",
    )
    p.add_argument(
        "--per-question-context",
        action="store_true",
        help="search each question among its own passages (questions.jsonl context_ids, e.g. HotpotQA's "
        "distractor setting, or SQuAD's context_id) instead of the pooled corpus",
    )
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
    g.add_argument(
        "--sample",
        type=positive_int,
        metavar="N",
        help="N answerable + N unanswerable questions, drawn with --seed (default: all); on a set with no "
        "unanswerable question (HotpotQA, Natural Questions) that is N questions",
    )
    g.add_argument(
        "--save-answers",
        metavar="FILE",
        help="write one JSON line per question (question, answer, outcome and grade, citations, retrieved ids, "
        "gold ids; for a cascade, the stage that answered, those that declined and why), as each is answered",
    )
    g.add_argument("--seed", type=int, default=0, help="sampling seed (0)")
    g.add_argument(
        "--match",
        choices=("em", "contains"),
        default="em",
        help="em: SQuAD exact match (span readers); contains: the gold answer inside a sentence (LLMs), and for a "
        "'list' question every item of a gold list, in any order",
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
