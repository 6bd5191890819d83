"""The ``ragline`` command. Each sub-command is a thin layer over the library.

Results go to stdout (a table, or with ``--output json`` exactly one line of JSON); progress,
warnings and errors go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ragline import __version__
from ragline.errors import ConfigError, RaglineError
from ragline.index import VARIANTS, BM25Params, Index, IndexSettings
from ragline.ingest import LoadReport, load_jsonl_corpus, load_path
from ragline.ingest.loaders import DOCUMENT_SUFFIXES
from ragline.progress import stderr
from ragline.text import PRESETS, get_analyzer

DEFAULT_INDEX = "ragline-index"
EXAMPLES = """\
examples:
  ragline index ./docs                      index a folder of documents (again: syncs changes)
  ragline search "remote work allowance" --filter "acl in [all, hr]"
  ragline info
  ragline eval ../shared/bench/scifact --retriever bm25 --split test --output json

The index directory is --index, else $RAGLINE_INDEX, else ./ragline-index.
Filters: field=value, field!=value, field<=value (<, >, >=), field in [a, b], with and/or/not and ().
"""


# -- helpers ----------------------------------------------------------------------------------------
def _index_path(args: argparse.Namespace) -> Path:
    return Path(args.index or os.environ.get("RAGLINE_INDEX") or DEFAULT_INDEX)


def _emit_json(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")


def _bm25_params(args: argparse.Namespace, base: BM25Params) -> BM25Params:
    return BM25Params(
        variant=args.variant or base.variant,
        k1=base.k1 if args.k1 is None else args.k1,
        b=base.b if args.b is None else args.b,
        delta=base.delta if args.delta is None else args.delta,
    )


def _parse_fields(spec: str) -> dict[str, float]:
    fields = {}
    for part in spec.split(","):
        name, _, weight = part.partition("=")
        try:
            fields[name.strip()] = float(weight) if weight else 1.0
        except ValueError:
            raise RaglineError(
                f"--fields: weight {weight!r} of {name!r} is not a number (e.g. title=2,text=1)"
            ) from None
    return fields


def _load_source(source: Path, max_bytes: int, follow_links: bool = False) -> LoadReport:
    """A .jsonl corpus, a BEIR folder (corpus.jsonl), a folder of documents, or one document file."""
    if source.is_file() and source.suffix == ".jsonl":
        return load_jsonl_corpus(source)
    if (source / "corpus.jsonl").is_file():
        return load_jsonl_corpus(source / "corpus.jsonl")
    return load_path(source, max_bytes=max_bytes, follow_links=follow_links)


# -- sub-commands -------------------------------------------------------------------------------------
def cmd_index(args: argparse.Namespace) -> int:
    path = _index_path(args)
    settings = _settings(args, embed=args.embedder.lower() != "none")
    started = time.perf_counter()
    with stderr.status(f"reading {args.source}"):
        loaded = _load_source(Path(args.source), int(args.max_file_mb * 1024 * 1024), args.follow_links)
    for error in loaded.errors:
        stderr.print(f"[yellow]skipped[/] {error}", highlight=False)
    if loaded.unsupported:
        listed = ", ".join(f"{count} {suffix or '(no suffix)'}" for suffix, count in loaded.unsupported.items())
        stderr.print(f"[yellow]not indexed[/] (unsupported file types): {listed}", highlight=False)
    if settings.context == "late":
        raise RaglineError("--context late needs vectors per chunk at sync time; use breadcrumb or llm here")
    units = loaded.documents
    if settings.chunker != "none":
        from ragline.ingest.pipeline import IngestConfig, chunk_documents

        units, _ = chunk_documents(loaded.documents, IngestConfig(settings.chunker, settings.context))
    with Index.open_or_create(path, settings) as index:
        # A file that fails to load keeps what an earlier run indexed (nothing indexed is lost), except where
        # failing closed is safer (bad metadata, links out of the folder): loaded.keep says which ids stay.
        # One document file adds or updates that document; a folder or corpus is mirrored (prune).
        one_file = Path(args.source).is_file() and Path(args.source).suffix != ".jsonl"
        report = index.sync(units, prune=not one_file, keep=loaded.keep)
        with stderr.status(f"committing {report.added + report.updated} documents"):
            index.commit()
        _report_embeddings(index)
        info = index.info()
    result = {
        "index": str(path),
        "added": report.added,
        "updated": report.updated,
        "deleted": report.deleted,
        "unchanged": report.unchanged,
        "skipped": len(loaded.errors),
        "unsupported": loaded.unsupported,
        "unit": "documents" if settings.chunker == "none" else "chunks",
        "documents": info["documents"],
        "generation": info["generation"],
        "seconds": round(time.perf_counter() - started, 3),
    }
    if args.output == "json":
        _emit_json(result)
    else:
        Console().print(
            f"{path}: {report.added} added, {report.updated} updated, {report.deleted} deleted, "
            f"{report.unchanged} unchanged, {len(loaded.errors)} skipped, "
            f"{sum(loaded.unsupported.values())} unsupported; {info['documents']} documents "
            f"(generation {info['generation']}, {result['seconds']} s)"
        )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    path = _index_path(args)
    from ragline.retrieve.registry import build_retriever

    index = Index.open(path)
    spec = args.retriever or ("hybrid" if index.settings.embedder else "bm25")
    retriever = build_retriever(spec, index, _bm25_params(args, index.settings.bm25))
    hits = retriever.search(args.query, args.k, args.filter)
    if args.output == "json":
        _emit_json(
            {
                "query": args.query,
                "hits": [
                    {
                        "rank": h.rank,
                        "doc_id": h.doc_id,
                        "score": h.score,
                        "title": h.title,
                        "snippet": _snippet(h.text),
                    }
                    for h in hits
                ],
                "provenance": {
                    "ragline_version": __version__,
                    "index": str(path),
                    "retriever": retriever.config(),
                    "filter": args.filter,
                    "generation": index.generation,
                },
            }
        )
        return 0
    table = Table(title=f"{len(hits)} results for {args.query!r}" + (f" where {args.filter}" if args.filter else ""))
    for column in ("#", "score", "id", "title / snippet"):
        table.add_column(column, overflow="fold")
    for h in hits:
        table.add_row(str(h.rank), f"{h.score:.3f}", h.doc_id, f"[bold]{h.title}[/]\n{_snippet(h.text)}")
    Console().print(table)
    return 0


def _snippet(text: str, width: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def cmd_info(args: argparse.Namespace) -> int:
    info = Index.open(_index_path(args)).info()
    if args.output == "json":
        _emit_json(info)
        return 0
    table = Table(title=f"ragline index {info['path']}", show_header=False)
    for key in (
        "documents",
        "deleted",
        "size_bytes",
        "generation",
        "format",
        "ragline_version",
        "created_at",
        "committed_at",
    ):
        table.add_row(key, str(info[key]))
    table.add_row(
        "segments", ", ".join(f"{s['name']} ({s['rows']} rows, {s['deleted']} deleted)" for s in info["segments"])
    )
    settings = info["settings"]
    table.add_row("analyzer", json.dumps(settings["analyzer"]))
    table.add_row("fields", json.dumps(settings["fields"]))
    table.add_row("bm25", json.dumps(settings["bm25"]))
    Console().print(table)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from ragline.eval.datasets import load_dataset
    from ragline.eval.retrieval import evaluate_retriever
    from ragline.eval.stats import compare
    from ragline.ingest.pipeline import IngestConfig, build_index
    from ragline.retrieve.registry import build_retriever, needs_embeddings

    specs = args.retriever or ["bm25"]
    if args.judge and not args.reader:
        raise ConfigError("--judge checks the citations of answers: give a --reader too")
    with stderr.status(f"loading {args.dataset}"):
        dataset = load_dataset(args.dataset, args.split)
    settings = _settings(args, embed=needs_embeddings(specs))
    ingest = IngestConfig(args.chunker, args.context)
    with stderr.status(f"indexing {len(dataset.corpus)} documents ({args.chunker}, {args.context})"):
        index = build_index(dataset.corpus, ingest, settings)
    _report_embeddings(index)
    doc_of = None
    if args.chunker != "none":
        doc_of = {d.id: str(d.metadata.get("doc_id", d.id)) for d in index.documents()}
    if args.reader:
        return _eval_answers(args, dataset, index, specs[0])
    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    retrievers = [build_retriever(spec, index, _bm25_params(args, settings.bm25)) for spec in specs]
    results = [evaluate_retriever(dataset, r, metrics, args.depth, doc_of) for r in retrievers]
    if args.save_run:
        from ragline.eval.trec import write_run

        write_run(results[0].run, args.save_run, tag=specs[0].partition(":")[0])
    provenance = {
        "ragline_version": __version__,
        "dataset_path": str(dataset.path),
        "dataset_hash": dataset.hash,
        "split": args.split,
        "depth": args.depth,
        "ingest": ingest.to_dict(),
        "config": results[0].retriever if len(specs) == 1 else [r.retriever for r in results],
    }
    head = {"dataset": dataset.name, "split": args.split, "queries": len(dataset.judged_queries)}
    comparisons = [
        {
            "baseline": specs[0],
            "retriever": spec,
            "metric": metric,
            **(compare(results[0].per_query_metric(metric), result.per_query_metric(metric))),
        }
        for spec, result in zip(specs[1:], results[1:])
        for metric in metrics[:1]
    ]
    if args.output == "json":
        if len(specs) == 1:
            _emit_json({**head, "retriever": specs[0], "metrics": results[0].metrics, "provenance": provenance})
        else:
            listed = [{"retriever": spec, "metrics": r.metrics} for spec, r in zip(specs, results)]
            _emit_json({**head, "results": listed, "comparisons": comparisons, "provenance": provenance})
        return 0
    table = Table(title=f"{dataset.name} ({args.split}, {head['queries']} judged queries)")
    table.add_column("metric")
    for spec in specs:
        table.add_column(spec, justify="right")
    for m in metrics:
        table.add_row(m, *(f"{result.metrics[m]:.4f}" for result in results))
    Console().print(table)
    for c in comparisons:
        Console().print(
            f"{c['retriever']} vs {c['baseline']} on {c['metric']}: delta {c['delta']:+.4f} "
            f"(95% CI {c['ci'][0]:+.4f}..{c['ci'][1]:+.4f}), p = {c['p_randomization']:.4f} (randomization), "
            f"{c['p_t_test']:.4f} (t-test), d = {c['effect_size']:.2f}, n = {c['n']}"
        )
    return 0


def _eval_answers(args: argparse.Namespace, dataset: Any, index: Index, retriever: str) -> int:
    from ragline.answer.pipeline import RAGPipeline, build_reader
    from ragline.eval.qa import QAQuestion, evaluate_answers, sample_questions

    if not dataset.questions:
        raise RaglineError(f"{dataset.path} has no questions.jsonl: answer evaluation needs questions with answers")
    questions = sample_questions([QAQuestion.from_record(r) for r in dataset.questions], args.sample, args.seed)
    pipeline = RAGPipeline(index, build_reader(args.reader), retriever=retriever, k=args.k, order=args.order)
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
    payload = {"dataset": dataset.name, "questions": len(questions), "reader": args.reader, "retriever": retriever,
               "judge": judge.id if judge else None, "summary": summary,
               "provenance": {"ragline_version": __version__, "dataset_hash": dataset.hash, "sample": args.sample,
                              "seed": args.seed, "match": args.match, **pipeline.config()}}  # fmt: skip
    if args.output == "json":
        _emit_json(payload)
        return 0
    table = Table(title=f"{dataset.name}: {len(questions)} questions, {args.reader} over {retriever}")
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


def _report_embeddings(index: Index) -> None:
    """Say on stderr how many passages were embedded and how many came from the cache."""
    counts = index.embedding_counts()
    if counts is not None:
        stderr.print(f"embeddings: {counts['computed']} computed, {counts['cached']} from cache ({counts['id']})")


def _settings(args: argparse.Namespace, embed: bool) -> IndexSettings:
    return IndexSettings(
        analyzer=get_analyzer(args.analyzer),
        fields=_parse_fields(args.fields),
        embedder=args.embedder if embed else None,
        vector_index=args.vector_index,
        chunker=getattr(args, "chunker", "none") if args.command == "index" else "none",
        context=getattr(args, "context", "none") if args.command == "index" else "none",
    )


def cmd_ask(args: argparse.Namespace) -> int:
    from ragline.answer.pipeline import RAGPipeline, build_reader

    index_path = args.index or os.environ.get("RAGLINE_INDEX")
    if index_path:
        index = Index.open(index_path)
    else:
        from ragline.corpora.builtin import orrin_index

        index, _ = orrin_index()
    flt = args.filter
    if args.groups:
        from ragline.index.filters import acl_clause

        acl = acl_clause([g.strip() for g in args.groups.split(",")])
        flt = f"({flt}) and {acl}" if flt else acl
    retriever = args.retriever or ("hybrid" if index.settings.embedder else "bm25")
    pipeline = RAGPipeline(index, build_reader(args.reader), retriever=retriever, k=args.k, order=args.order)
    context = pipeline.context(args.question, flt)
    console = Console(soft_wrap=True)
    answer = None
    for piece in pipeline.reader.stream(args.question, context):
        if isinstance(piece, str):
            if args.output != "json":
                console.out(piece, end="", highlight=False)
        else:
            answer = piece
    assert answer is not None
    citations = [
        {
            "n": c.n,
            "doc_id": c.doc_id,
            "chunk_id": c.chunk_id,
            "title": c.title,
            "text": c.text,
            "supported": c.supported,
        }
        for c in answer.citations
    ]
    if args.output == "json":
        _emit_json({"question": args.question, "answer": answer.text, "abstained": answer.abstained,
                    "citations": citations,
                    "provenance": {"ragline_version": __version__, "index": str(index.path), "filter": flt,
                                   "generation": index.generation, **pipeline.config()}})  # fmt: skip
        return 0
    console.out("")
    if answer.abstained:
        console.print("[yellow]The sources do not answer this question.[/]")
    shown = {c.n for c in answer.citations}
    console.rule("sources")
    for source in context.sources:
        hit = source.hit
        section = " > ".join(hit.metadata.get("section") or [])
        mark = "[green]cited[/] " if source.n in shown else ""
        console.print(
            f"[{source.n}] {mark}[bold]{hit.title}[/]" + (f" — {section}" if section else "") + f" ({hit.doc_id})"
        )
        console.print(f"    [dim]{_snippet(hit.text, 160)}[/]", highlight=False)
    return 0


def cmd_corpus(args: argparse.Namespace) -> int:
    from ragline.corpora.countries import build_countries
    from ragline.corpora.export import export_beir, write_markdown_folder
    from ragline.corpora.orrin import DEFAULT_SEED, TRAIN_SEED, build_orrin

    if args.name == "orrin":
        corpus = build_orrin(TRAIN_SEED if args.train else args.seed or DEFAULT_SEED)
    else:
        language = "zh" if args.name == "countries-zh" else "en"
        corpus = build_countries(**({"seed": args.seed} if args.seed else {}), language=language)
    write = export_beir if args.format == "beir" else write_markdown_folder
    out = write(corpus, args.out)
    result = {"corpus": corpus.name, "documents": len(corpus.documents), "questions": len(corpus.questions),
              "fingerprint": corpus.fingerprint(), "path": str(out), "format": args.format}  # fmt: skip
    if args.output == "json":
        _emit_json(result)
    else:
        Console().print(
            f"{result['corpus']}: {result['documents']} documents, {result['questions']} questions -> {out}"
        )
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    from ragline.corpora.orrin import DEFAULT_SEED, build_orrin
    from ragline.eval import chunking

    corpus = build_orrin(args.seed if args.seed is not None else DEFAULT_SEED)
    if args.name == "lost-in-the-middle":
        return _lost_in_the_middle(args, corpus)
    rows = chunking.run(
        corpus,
        chunkers=args.chunker or chunking.CHUNKERS,
        contexts=args.context or chunking.CONTEXTS,
        retrievers=args.retriever or chunking.RETRIEVERS,
        embedder=args.embedder,
    )
    payload = {
        "experiment": args.name,
        "corpus": corpus.name,
        "corpus_fingerprint": corpus.fingerprint(),
        "rows": rows,
        "provenance": {"ragline_version": __version__, "embedder": args.embedder},
    }
    if args.output == "json":
        _emit_json(payload)
        return 0
    types = [t for t in rows[0]["by_type"] if t != "all"] if rows else []
    table = Table(title=f"Chunking on {corpus.name}: Hit@1 by question type (split = evidence sentences cut)")
    for column in ("chunker", "context", "retriever", "chunks", "split", *types, "all"):
        table.add_column(column, justify="left" if column in ("chunker", "context", "retriever") else "right")
    for row in rows:
        hits = [row["by_type"][t]["hit@1"] for t in [*types, "all"]]
        cells = ["—" if h is None else f"{h:.2f}" for h in hits]
        table.add_row(row["chunker"], row["context"], row["retriever"], str(row["chunks"]),
                      f"{row['split_evidence']:.0%}", *cells)  # fmt: skip
    Console(width=max(Console().width, 160)).print(table)
    return 0


def _lost_in_the_middle(args: argparse.Namespace, corpus: Any) -> int:
    """The position experiment (Liu et al. 2023): accuracy by gold position, and context orders."""
    from ragline.eval import position

    llm = None if args.llm in ("", "none") else args.llm
    questions = position.DEFAULT_LLM_QUESTIONS if args.questions is None else args.questions
    chunker = args.chunker[0] if args.chunker else position.DEFAULT_CHUNKER
    started = time.perf_counter()
    payload = position.run(
        corpus,
        position.default_readers(args.k, questions or None, llm),
        k=args.k,
        seed=args.sample_seed,
        chunker=chunker,
        log=lambda message: stderr.print(message, highlight=False, markup=False),
    )
    payload["wall_s"] = round(time.perf_counter() - started, 1)
    payload["provenance"] = {"ragline_version": __version__}
    if args.plot:
        position.plot_curves(payload, args.plot)
    if args.output == "json":
        _emit_json(payload)
        return 0
    k = payload["k"]
    console = Console(width=max(Console().width, 120))
    table = Table(title=f"Lost in the middle on {corpus.name}: accuracy by position of the gold source among {k}")
    for column in ("reader", "n", *map(str, range(1, k + 1)), "gold alone"):
        table.add_column(column, justify="left" if column == "reader" else "right")
    orders = Table(title="Context order of the BM25 top-k (questions whose gold chunk is in it)")
    for column in ("reader", "n", "rank", "ends", "reverse"):
        orders.add_column(column, justify="left" if column == "reader" else "right")
    for spec, result in payload["readers"].items():
        curve = result["positions"]
        cells = [_rate(a) for a in curve["accuracy"]]
        table.add_row(spec, str(curve["n"]), *cells, _rate(curve["oracle"]["accuracy"]))
        if "orderings" in result:
            ordering = result["orderings"]
            rates = [_rate(ordering[order]["accuracy"]) for order in ("rank", "ends", "reverse")]
            orders.add_row(spec, str(ordering["n"]), *rates)
    console.print(table)
    console.print(orders)
    return 0


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


# -- the parser ---------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragline",
        description="Index documents, search them, and measure retrieval quality. Runs offline.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ragline {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(p: argparse.ArgumentParser, index: bool = True) -> None:
        if index:
            p.add_argument("--index", help="index directory (default: $RAGLINE_INDEX, else ./ragline-index)")
        p.add_argument("--output", choices=("table", "json"), default="table", help="json: one line on stdout")

    def bm25_flags(p: argparse.ArgumentParser) -> None:
        g = p.add_argument_group("BM25 (defaults: the index's, else lucene k1=0.9 b=0.4 as Anserini)")
        g.add_argument("--variant", choices=VARIANTS, help="BM25 variant (see docs/bm25.md)")
        g.add_argument("--k1", type=float, help="term-frequency saturation (0.9)")
        g.add_argument("--b", type=float, help="length normalization, 0..1 (0.4)")
        g.add_argument("--delta", type=float, help="bm25l / bm25+ lower bound (0.5)")

    def analysis_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("--analyzer", default="english", choices=sorted(PRESETS), help="text analysis (english)")
        p.add_argument(
            "--embedder",
            default="minilm",
            help="embedding model name or folder (minilm = all-MiniLM-L6-v2, multilingual-e5-small); "
            "index: 'none' for BM25 only",
        )
        p.add_argument(
            "--vector-index",
            default="hnsw",
            help="ANN index spec: flat, hnsw[:m=32,ef_search=128], ivf[:nprobe=16], ivfpq",
        )
        p.add_argument(
            "--fields", default="body", help="indexed fields and weights: body (title+text), or title=2,text=1"
        )

    p = sub.add_parser(
        "index",
        help="index or re-sync a folder of documents (" + " ".join(DOCUMENT_SUFFIXES) + "), one file, or a BEIR corpus",
        description="Index SOURCE. Run again on the same source to sync: new and changed files "
        "are (re)indexed, removed files deleted, unchanged files skipped.",
    )
    p.add_argument(
        "source",
        help="a folder of documents (" + ", ".join(DOCUMENT_SUFFIXES) + "), one such file, "
        "a BEIR folder (corpus.jsonl) or a .jsonl corpus",
    )
    p.add_argument("--max-file-mb", type=float, default=20.0, help="skip (and report) files larger than this (20)")
    p.add_argument(
        "--follow-links",
        action="store_true",
        help="follow symbolic links that point outside the folder (default: report and skip them)",
    )
    p.add_argument(
        "--chunker",
        default="none",
        metavar="SPEC",
        help="cut documents into chunks: fixed:size=100,overlap=30 (the measured best), structure:max_words=200, "
        "sentences:window=3, recursive:size=120; none = whole documents (default)",
    )
    p.add_argument(
        "--context",
        default="none",
        choices=("none", "breadcrumb", "llm"),
        help="chunk context: breadcrumb = [Title > Section] prefix; llm = a sentence by the local LLM",
    )
    analysis_flags(p)
    common(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="ranked results with scores and snippets")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help="number of results (10)")
    p.add_argument("--filter", help='metadata filter, e.g. "acl in [all, hr] and year >= 2024"')
    p.add_argument(
        "--retriever",
        metavar="SPEC",
        help="bm25, dense or hybrid[:fuser=...,depth=...] (default: hybrid when the index has embeddings, else bm25)",
    )
    bm25_flags(p)
    common(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("info", help="documents, segments, deletes, size and build stamps of an index")
    common(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser(
        "eval",
        help="measure retrieval on a BEIR folder or a questions folder",
        description="Index the dataset's corpus in memory, run its judged queries and score them.",
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
    p.add_argument("--metrics", default=",".join(_default_metrics()), help="comma-separated metric names")
    p.add_argument("--depth", type=int, default=1000, help="documents retrieved per query (1000)")
    p.add_argument("--save-run", metavar="FILE", help="write the run in TREC format")
    p.add_argument(
        "--chunker",
        default="none",
        metavar="SPEC",
        help="index chunks, a document scoring as its best chunk: fixed:size=128, structure:max_words=200, ...",
    )
    p.add_argument(
        "--context", default="none", choices=("none", "breadcrumb", "late", "llm"), help="chunk context (none)"
    )
    g = p.add_argument_group(
        "answer evaluation (needs questions.jsonl): retrieve with the first --retriever, read, grade"
    )
    g.add_argument("--reader", metavar="SPEC", help="extractive[:threshold=..] or llm[:model=...,max_tokens=..]")
    g.add_argument("-k", type=int, default=5, help="sources given to the reader (5)")
    g.add_argument("--order", choices=("rank", "ends", "reverse"), default="rank", help="source order (rank)")
    g.add_argument("--sample", type=int, help="N answerable + N unanswerable questions (default: all)")
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
    analysis_flags(p)
    bm25_flags(p)
    common(p, index=False)
    p.set_defaults(func=cmd_eval)
    p = sub.add_parser(
        "ask",
        help="answer a question from the index, with numbered, checkable citations",
        description="Retrieve, assemble numbered sources, and answer only from them. Without --index (or "
        "$RAGLINE_INDEX) the built-in Orrin Grid index is used (built on first use, then cached).",
    )
    p.add_argument("question")
    p.add_argument(
        "--reader",
        default="llm",
        metavar="SPEC",
        help="llm[:model=local:qwen2.5-coder-0.5b,max_tokens=128] (default) or extractive[:threshold=0.47]",
    )
    p.add_argument(
        "--retriever", metavar="SPEC", help="bm25, dense or hybrid (default: hybrid when the index has embeddings)"
    )
    p.add_argument("-k", type=int, default=5, help="sources retrieved (5)")
    p.add_argument(
        "--order",
        choices=("rank", "ends", "reverse"),
        default="rank",
        help="source order in the prompt: rank, or ends = best at both ends (lost in the middle)",
    )
    p.add_argument("--filter", help="metadata filter applied inside retrieval")
    p.add_argument("--groups", help="ask as a user in these ACL groups, e.g. all,hr (adds acl in [...])")
    common(p)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser(
        "corpus",
        help="write a built-in corpus (Orrin Grid, countries) as a BEIR folder or Markdown files",
        description="The generated corpora are deterministic: the same seed gives byte-identical files.",
    )
    p.add_argument("name", choices=("orrin", "countries", "countries-zh"))
    p.add_argument("--out", required=True, help="folder to write (replaced only if it holds an earlier export)")
    p.add_argument("--format", choices=("beir", "markdown"), default="beir")
    p.add_argument("--seed", type=int, help="world seed (default: the evaluation world)")
    p.add_argument("--train", action="store_true", help="the disjoint training world (orrin)")
    common(p, index=False)
    p.set_defaults(func=cmd_corpus)

    p = sub.add_parser(
        "experiment",
        help="rerun a lecture experiment (chunking, lost-in-the-middle) on the built-in Orrin Grid corpus",
        description="chunking: chunker x context x retriever; Hit@1 by question type and the share of "
        "evidence sentences split by chunk boundaries. lost-in-the-middle: accuracy of the extractive reader "
        "and an LLM with the gold source at each position among k BM25 distractors (Liu et al. 2023), and "
        "of the context orders rank / ends / reverse.",
    )
    p.add_argument("name", choices=("chunking", "lost-in-the-middle"))
    p.add_argument("--chunker", action="append", metavar="SPEC", help="chunker spec, repeatable (default: a sweep)")
    p.add_argument("--context", action="append", choices=("none", "breadcrumb", "late", "llm"), help="repeatable")
    p.add_argument("--retriever", action="append", choices=("bm25", "dense", "hybrid"), help="repeatable")
    p.add_argument("--seed", type=int, help="corpus seed (default: the evaluation world)")
    p.add_argument("--embedder", default="minilm", help="embedding model (minilm)")
    g = p.add_argument_group("lost-in-the-middle (--chunker: the first one, default fixed:size=100,overlap=30)")
    g.add_argument("--k", type=int, default=5, help="sources per context: 1 gold + k-1 distractors (5)")
    g.add_argument("--questions", type=int, help="LLM sample size, stratified by type (default 9; 0 = all)")
    g.add_argument("--sample-seed", type=int, default=0, help="seed of the question sample (0)")
    g.add_argument(
        "--llm",
        default="llm:model=local:qwen2.5-coder-0.5b,max_tokens=64",
        help="LLM reader spec, or none for the extractive reader only",
    )
    g.add_argument("--plot", metavar="PNG", help="write accuracy vs position here")
    common(p, index=False)
    p.set_defaults(func=cmd_experiment)
    return parser


def _default_metrics() -> tuple[str, ...]:
    from ragline.eval.retrieval import DEFAULT_METRICS

    return DEFAULT_METRICS


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except RaglineError as error:
        stderr.print(f"[red]error:[/] {error}", highlight=False)
        return 2
    except KeyboardInterrupt:
        stderr.print("interrupted; the index keeps its last commit")
        return 130


if __name__ == "__main__":
    sys.exit(main())
