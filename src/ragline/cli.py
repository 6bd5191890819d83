"""The ``ragline`` command. Each sub-command is a thin layer over the library.

Results go to stdout (a table, or with ``--output json`` exactly one line of JSON); progress,
warnings and errors go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline import __version__
from ragline.corpora.builtin import DEFAULT_INGEST
from ragline.errors import ConfigError, IndexMismatchError, ModelError, RaglineError
from ragline.index import VARIANTS, BM25Params, Index, IndexSettings
from ragline.index.store import MANIFEST
from ragline.ingest import LoadReport, load_jsonl_corpus, load_path
from ragline.ingest.loaders import DOCUMENT_SUFFIXES
from ragline.progress import stderr
from ragline.text import PRESETS, Analyzer, get_analyzer

DEFAULT_INDEX = "ragline-index"
EXAMPLES = """\
examples:
  ragline index ./docs                      index a folder of documents (again: syncs changes)
  ragline search "remote work allowance" --filter "acl in [all, hr]"
  ragline ask "How much is the remote work allowance?" --groups all,hr
  ragline info
  ragline eval ../shared/bench/scifact --retriever bm25 --split test --output json

The index directory is --index, else $RAGLINE_INDEX, else ./ragline-index. `ragline index` cuts documents
into 100-word chunks with a [Title > Section] breadcrumb (--chunker none: whole documents) and stamps its
settings in the index; a re-sync reuses them. `ragline ask` without any of the three answers from the
built-in Orrin Grid demo corpus, and says so.
Filters: field=value, field!=value, field<=value (<, >, >=), field in [a, b], with and/or/not and ().
"""


# -- helpers ----------------------------------------------------------------------------------------
def _index_location(args: argparse.Namespace) -> Path | None:
    """The index a command uses: --index, else $RAGLINE_INDEX, else ./ragline-index when it exists, else None."""
    given = getattr(args, "index", None) or os.environ.get("RAGLINE_INDEX")
    if given:
        return Path(given)
    default = Path(DEFAULT_INDEX)
    return default if default.exists() else None


def _index_path(args: argparse.Namespace) -> Path:
    """Where `index` writes and `search`/`info` read (opening a missing one says how to create it)."""
    return _index_location(args) or Path(DEFAULT_INDEX)


def _positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (-k 0 or -k -1 would return nothing, silently)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


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


def _restricted_filter(args: argparse.Namespace) -> tuple[Any, str | None]:
    """``--filter`` joined (as trees) to the ACL groups of ``--groups a,b`` and each ``--group NAME``,
    and its text for reports.

    Neither flag: no restriction. Given but naming no group (``--groups ""``): nothing is visible.
    """
    from ragline.index.filters import acl_filter, filter_text, restrict

    if args.groups is None and not args.group:
        return args.filter, args.filter
    groups = [g.strip() for g in (args.groups or "").split(",") if g.strip()] + list(args.group or [])
    combined = restrict(args.filter, acl_filter(groups))
    return combined, filter_text(combined)


def _load_source(source: Path, max_bytes: int, follow_links: bool = False) -> LoadReport:
    """A .jsonl corpus, a BEIR folder (corpus.jsonl), a folder of documents, or one document file."""
    if source.is_file() and source.suffix == ".jsonl":
        return load_jsonl_corpus(source)
    if (source / "corpus.jsonl").is_file():
        return load_jsonl_corpus(source / "corpus.jsonl")
    return load_path(source, max_bytes=max_bytes, follow_links=follow_links)


# -- stamped index settings ---------------------------------------------------------------------------
# The settings `ragline index` stamps in an index, with the flag that sets each one.
STAMPED_FLAGS = {
    "analyzer": "--analyzer",
    "fields": "--fields",
    "embedder": "--embedder",
    "vector_index": "--vector-index",
    "chunker": "--chunker",
    "context": "--context",
    "default_acl": "--default-acl",
}


def _groups(spec: str, flag: str) -> tuple[str, ...]:
    groups = tuple(g.strip() for g in spec.split(",") if g.strip())
    if not groups:
        raise ConfigError(f"{flag}: no group names in {spec!r}; give them comma-separated, e.g. all,hr")
    return groups


def _given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The stamped settings the user gave flags for (argparse leaves the others None)."""
    given: dict[str, Any] = {}
    if args.analyzer is not None:
        given["analyzer"] = get_analyzer(args.analyzer)
    if args.fields is not None:
        given["fields"] = _parse_fields(args.fields)
    if args.embedder is not None:
        given["embedder"] = None if args.embedder.lower() == "none" else args.embedder
    if args.vector_index is not None:
        given["vector_index"] = args.vector_index
    if args.chunker is not None:
        given["chunker"] = args.chunker
    if args.context is not None:
        given["context"] = args.context
    if args.default_acl is not None:
        given["default_acl"] = _groups(args.default_acl, "--default-acl")
    return given


def _stamped_settings(path: Path) -> IndexSettings | None:
    """The settings stamped in the index at ``path``; None when there is none (or it cannot be read:
    opening it then reports why)."""
    try:
        return IndexSettings.from_dict(json.loads((path / MANIFEST).read_text("utf-8"))["settings"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _describe_setting(name: str, value: Any) -> str:
    """A stamped setting as the user would write the flag."""
    if isinstance(value, Analyzer):
        return value.name
    if name == "fields":
        return ",".join(f"{field}={weight:g}" for field, weight in value.items())
    if isinstance(value, (tuple, list)):
        return ",".join(value)
    return "none" if value is None else str(value)


def _same_setting(given: Any, stamped: Any) -> bool:
    # a group list read back from JSON is a list; the flag gives a tuple
    if isinstance(given, (tuple, list)) and isinstance(stamped, (tuple, list)):
        return tuple(given) == tuple(stamped)
    return bool(given == stamped)


def _index_settings(args: argparse.Namespace, path: Path) -> IndexSettings:
    """The settings of `ragline index`: an existing index's stamp, or defaults, overridden by the flags given.

    A flag that contradicts the stamp is refused: mixing chunkers or embedders in one index would make
    its documents incomparable.
    """
    given = _given_settings(args)
    stamp = _stamped_settings(path)
    if stamp is None:
        chunker = given.get("chunker", DEFAULT_INGEST.chunker)
        defaults = {
            "embedder": "minilm",
            "chunker": DEFAULT_INGEST.chunker,
            "context": DEFAULT_INGEST.context if chunker != "none" else "none",
        }
        return IndexSettings(**{**defaults, **given})
    changed = [
        (name, getattr(stamp, name, None), value)
        for name, value in given.items()
        if not _same_setting(value, getattr(stamp, name, None))
    ]
    if changed:
        differences = "; ".join(
            f"{name.replace('_', ' ')} {_describe_setting(name, old)!r}, not {_describe_setting(name, new)!r} "
            f"({STAMPED_FLAGS[name]})"
            for name, old, new in changed
        )
        raise IndexMismatchError(
            f"index {path} was built with other settings: {differences}. Leave the flag out to keep the index's "
            f"setting, give another --index, or delete {path} to rebuild it with the new one"
        )
    return stamp


# -- sub-commands -------------------------------------------------------------------------------------
def cmd_index(args: argparse.Namespace) -> int:
    path = _index_path(args)
    settings = _index_settings(args, path)
    started = time.perf_counter()
    with stderr.status(f"reading {args.source}"):
        loaded = _load_source(Path(args.source), int(args.max_file_mb * 1024 * 1024), args.follow_links)
    for error in loaded.errors:
        stderr.print(Text.assemble(("skipped", "yellow"), f" {error}"), highlight=False)
    if loaded.unsupported:
        listed = ", ".join(f"{count} {suffix or '(no suffix)'}" for suffix, count in loaded.unsupported.items())
        stderr.print(Text.assemble(("not indexed", "yellow"), f" (unsupported file types): {listed}"), highlight=False)
    if settings.context == "late":
        raise RaglineError("--context late needs vectors per chunk at sync time; use breadcrumb or llm here")
    from ragline.text.scripts import cjk_embedder_warning

    warning = cjk_embedder_warning((d.text for d in loaded.documents), settings.embedder)
    if warning:
        stderr.print(Text(f"warning: {warning}", style="yellow"))
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
        unit = "documents" if settings.chunker == "none" else "chunks"
        with stderr.status(f"committing {report.added + report.updated} {unit}"):
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
        "unit": unit,
        # "documents" counts the indexed units (kept for scripts written before chunking was the default)
        "documents": info["documents"],
        "chunks": info["documents"] if unit == "chunks" else None,
        "chunker": settings.chunker,
        "context": settings.context,
        "generation": info["generation"],
        "seconds": round(time.perf_counter() - started, 3),
    }
    if args.output == "json":
        _emit_json(result)
    else:
        chunking = "" if unit == "documents" else f", {settings.chunker} + {settings.context}"
        Console().print(
            Text(
                f"{path}: {report.added} added, {report.updated} updated, {report.deleted} deleted, "
                f"{report.unchanged} unchanged, {len(loaded.errors)} skipped, "
                f"{sum(loaded.unsupported.values())} unsupported; {info['documents']} {unit} "
                f"(generation {info['generation']}{chunking}, {result['seconds']} s)"
            )
        )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    path = _index_path(args)
    from ragline.retrieve.base import empty_query_reason
    from ragline.retrieve.registry import build_retriever

    index = Index.open(path)
    spec = args.retriever or ("hybrid" if index.settings.embedder else "bm25")
    retriever = build_retriever(spec, index, _bm25_params(args, index.settings.bm25))
    flt, flt_text = _restricted_filter(args)
    analyzer = index.settings.analyzer
    empty = empty_query_reason(args.query, analyzer)
    hits = [] if empty else retriever.search(args.query, args.k, flt)
    terms = set(analyzer(args.query))
    if args.output == "json":
        _emit_json(
            {
                "query": args.query,
                "hits": [
                    {
                        "rank": h.rank,
                        "doc_id": _document_of(h),
                        "chunk_id": h.doc_id,
                        "score": h.score,
                        "title": h.title,
                        "snippet": _snippet(h.text, terms, analyzer),
                    }
                    for h in hits
                ],
                **({"reason": empty} if empty else {}),
                "provenance": {
                    "ragline_version": __version__,
                    "index": str(path),
                    "retriever": retriever.config(),
                    "filter": flt_text,
                    "generation": index.generation,
                },
            }
        )
        return 0
    if empty:
        stderr.print(Text(f"no results: {empty}", style="yellow"))
    title = f"{len(hits)} results for {args.query!r}" + (f" where {flt_text}" if flt_text else "")
    table = Table(title=Text(title))
    for column in ("#", "score", "id", "title / snippet"):
        table.add_column(column, overflow="fold")
    for h in hits:
        cell = Text.assemble((h.title, "bold"), "\n" if h.title else "", _snippet(h.text, terms, analyzer))
        table.add_row(str(h.rank), f"{h.score:.3f}", Text(h.doc_id), cell)
    Console().print(table)
    return 0


def _document_of(hit: Any) -> str:
    """The document a hit belongs to: a chunk's ``doc_id``, else the hit's own id."""
    from ragline.answer.context import document_id

    return document_id(hit)


_WORD = re.compile(r"\w+")


def _snippet(text: str, terms: set[str], analyzer: Analyzer, width: int = 200) -> str:
    """A window of ``text`` (whitespace flattened) around the query terms, "…" where it is cut.

    The window starts a little before the first term match of the stretch that holds the most distinct
    query terms; words are matched through the index's analyzer, so "policies" finds "policy".
    """
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    analyzed: dict[str, list[str]] = {}
    matches = []  # (offset, term) of every word that is a query term
    for word in _WORD.finditer(flat) if terms else ():
        key = word.group()
        if key not in analyzed:
            analyzed[key] = analyzer(key)
        matches.extend((word.start(), term) for term in analyzed[key] if term in terms)
        if len(matches) >= 200:  # enough candidates; a long document would make the window search slow
            break
    start = 0
    if matches:
        lead = width // 5  # a few words of the text before the match
        best = max(
            range(len(matches)),
            key=lambda i: (len({t for at, t in matches[i:] if at < matches[i][0] + width - lead}), -i),
        )
        start = max(0, matches[best][0] - lead)
        if start > 0:  # begin at a word
            space = flat.find(" ", start)
            start = space + 1 if 0 <= space < matches[best][0] else matches[best][0]
    end = min(len(flat), start + width - 2)
    if end < len(flat):  # end at a word
        space = flat.rfind(" ", start, end)
        end = space if space > start else end
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")


def cmd_info(args: argparse.Namespace) -> int:
    info = Index.open(_index_path(args)).info()
    if args.output == "json":
        _emit_json(info)
        return 0
    table = Table(title=Text(f"ragline index {info['path']}"), show_header=False)
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
    segments = ", ".join(f"{s['name']} ({s['rows']} rows, {s['deleted']} deleted)" for s in info["segments"])
    table.add_row("segments", Text(segments))
    settings = info["settings"]
    chunker = settings.get("chunker", "none")
    table.add_row("unit", "documents" if chunker == "none" else "chunks")
    table.add_row("chunker", Text(chunker))
    table.add_row("context", Text(settings.get("context", "none")))
    table.add_row("embedder", Text(settings.get("embedder") or "none (BM25 only)"))
    table.add_row("vector index", Text(settings.get("vector_index", "hnsw") if settings.get("embedder") else "none"))
    if "default_acl" in settings:
        table.add_row("default acl", Text(_describe_setting("default_acl", settings["default_acl"])))
    table.add_row("analyzer", Text(json.dumps(settings["analyzer"])))
    table.add_row("fields", Text(json.dumps(settings["fields"])))
    table.add_row("bm25", Text(json.dumps(settings["bm25"])))
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
    settings = _eval_settings(args, embed=needs_embeddings(specs))
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
    table = Table(title=Text(f"{dataset.name} ({args.split}, {head['queries']} judged queries)"))
    table.add_column("metric")
    for spec in specs:
        table.add_column(Text(spec), justify="right")
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
    table = Table(title=Text(f"{dataset.name}: {len(questions)} questions, {args.reader} over {retriever}"))
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


def _eval_settings(args: argparse.Namespace, embed: bool) -> IndexSettings:
    """The in-memory index of `ragline eval` (chunking is its IngestConfig, not a stamp)."""
    return IndexSettings(
        analyzer=get_analyzer(args.analyzer),
        fields=_parse_fields(args.fields),
        embedder=args.embedder if embed else None,
        vector_index=args.vector_index,
    )


def cmd_ask(args: argparse.Namespace) -> int:
    from ragline.answer.pipeline import RAGPipeline, build_reader
    from ragline.retrieve.base import empty_query_reason

    location = _index_location(args)
    if location is not None:
        index = Index.open(location)
        answered_from = str(location)
    else:
        from ragline.corpora.builtin import orrin_index

        index, _ = orrin_index()
        answered_from = (
            f"the built-in Orrin Grid demo corpus ({index.path}), not your documents: no --index, "
            "$RAGLINE_INDEX or ./ragline-index; `ragline index DIR` indexes yours"
        )
    flt, flt_text = _restricted_filter(args)
    provenance = {"ragline_version": __version__, "index": str(index.path), "builtin": location is None,
                  "filter": flt_text, "generation": index.generation}  # fmt: skip
    if args.output != "json":
        stderr.print(Text(f"answered from {answered_from}", style="dim" if location else "yellow"))
    empty = empty_query_reason(args.question, index.settings.analyzer)
    if empty:  # no sources to read: the reader (maybe an LLM to load) is not needed
        if args.output == "json":
            _emit_json({"question": args.question, "answer": "", "abstained": True, "citations": [], "sources": [],
                        "reason": empty, "provenance": provenance})  # fmt: skip
        else:
            Console().print(Text(f"no answer: {empty}", style="yellow"))
        return 0
    retriever = args.retriever or ("hybrid" if index.settings.embedder else "bm25")
    pipeline = RAGPipeline(index, build_reader(args.reader), retriever=retriever, k=args.k, order=args.order)
    context = pipeline.context(args.question, flt)
    console = Console(soft_wrap=True)
    answer = _read_answer(pipeline, args.question, context, console if args.output != "json" else None)
    if args.output == "json":
        retrieved_by = pipeline.retriever_obj.config().get("name", retriever)
        _emit_json({"question": args.question, "answer": answer.text, "abstained": answer.abstained,
                    "citations": [c.to_dict() for c in answer.citations],
                    "attributed": bool(answer.details.get("attributed")),
                    "sources": [{"n": s.n, "doc_id": s.doc_id, "chunk_id": s.chunk_id, "title": s.hit.title,
                                 "score": s.hit.score, "retriever": retrieved_by, "text": s.text}
                                for s in context.sources],
                    "provenance": {**provenance, **pipeline.config()}})  # fmt: skip
        return 0
    console.out("")
    _print_answer(console, answer, context, index.settings.analyzer, args.question)
    return 0


def _print_answer(console: Console, answer: Any, context: Any, analyzer: Analyzer, question: str) -> None:
    """What follows the streamed answer: a warning when nothing backs it, then the numbered sources."""
    if answer.abstained:
        console.print(Text("The sources do not answer this question.", style="yellow"))
    elif not answer.citations:
        console.print(Text("no citation: this answer is not backed by the sources", style="yellow"))
    elif answer.details.get("attributed"):
        console.print(Text("the model cited nothing: ragline attributed the sources that contain the answer", "dim"))
    shown = {c.n for c in answer.citations}
    console.rule("sources")
    terms = set(analyzer(question))
    for source in context.sources:
        hit = source.hit
        section = " > ".join(hit.metadata.get("section") or [])
        console.print(
            Text.assemble(
                f"[{source.n}] ",
                ("cited " if source.n in shown else "", "green"),
                (hit.title, "bold"),
                f" — {section}" if section else "",
                f" ({hit.doc_id})",
            )
        )
        console.print(Text("    " + _snippet(hit.text, terms, analyzer, 160), style="dim"))


def _read_answer(pipeline: Any, question: str, context: Any, console: Console | None) -> Any:
    """The reader's answer, its text streamed to ``console`` as it comes (None: quiet)."""
    from ragline.models.llm import PromptTooLongError

    answer = None
    try:
        for piece in pipeline.reader.stream(question, context):
            if isinstance(piece, str):
                if console is not None:
                    console.out(piece, end="", highlight=False)
            else:
                answer = piece
    except PromptTooLongError as error:
        raise _question_too_long(error, pipeline.reader.llm, question) from None
    assert answer is not None
    return answer


def _question_too_long(error: Any, llm: Any, question: str) -> ModelError:
    """The too-long prompt said in terms of the question, the part of it the user wrote."""
    asked = llm.count_tokens(question)
    room = error.context_tokens - error.max_tokens - (error.prompt_tokens - asked)
    if room <= 0:
        return ModelError(
            f"the sources and the {error.max_tokens}-token reply alone fill the model's context of "
            f"{error.context_tokens} tokens: give fewer sources (-k) or a smaller max_tokens"
        )
    return ModelError(
        f"the question is {asked} tokens; the model's context is {error.context_tokens} tokens, which leaves "
        f"{room} for it beside the sources and the reply ({asked - room} too long): shorten the question"
    )


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
            Text(f"{result['corpus']}: {result['documents']} documents, {result['questions']} questions -> {out}")
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
        table.add_row(Text(row["chunker"]), row["context"], row["retriever"], str(row["chunks"]),
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
        table.add_row(Text(spec), str(curve["n"]), *cells, _rate(curve["oracle"]["accuracy"]))
        if "orderings" in result:
            ordering = result["orderings"]
            rates = [_rate(ordering[order]["accuracy"]) for order in ("rank", "ends", "reverse")]
            orders.add_row(Text(spec), str(ordering["n"]), *rates)
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

    def analysis_flags(p: argparse.ArgumentParser, stamped: bool = False) -> None:
        # In `index` every default is None: a flag left out keeps the existing index's stamped setting.
        def default(value: str) -> str | None:
            return None if stamped else value

        than = " (default: the index's, else {})" if stamped else " ({})"
        p.add_argument(
            "--analyzer",
            default=default("english"),
            choices=sorted(PRESETS),
            help="text analysis" + than.format("english"),
        )
        p.add_argument(
            "--embedder",
            default=default("minilm"),
            help="embedding model name or folder (minilm = all-MiniLM-L6-v2, multilingual-e5-small)"
            + than.format("minilm")
            + ("; 'none' for BM25 only" if stamped else ""),
        )
        p.add_argument(
            "--vector-index",
            default=default("hnsw"),
            help="ANN index spec: flat, hnsw[:m=32,ef_search=128], ivf[:nprobe=16], ivfpq" + than.format("hnsw"),
        )
        p.add_argument(
            "--fields",
            default=default("body"),
            help="indexed fields and weights: body (title+text), or title=2,text=1" + than.format("body"),
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
        metavar="SPEC",
        help=f"cut documents into chunks: {DEFAULT_INGEST.chunker} (the measured best: the default, for a new "
        "index), structure:max_words=200, sentences:window=3, recursive:size=120; none = whole documents",
    )
    p.add_argument(
        "--context",
        choices=("none", "breadcrumb", "llm"),
        help="chunk context: breadcrumb = [Title > Section] prefix (the default with chunks); llm = a sentence "
        "by the local LLM",
    )
    p.add_argument(
        "--default-acl",
        metavar="GROUPS",
        help="ACL groups (comma-separated, e.g. all) given to documents that have no acl of their own",
    )
    analysis_flags(p, stamped=True)
    common(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="ranked results with scores and snippets")
    p.add_argument("query")
    p.add_argument("-k", type=_positive_int, default=10, help="number of results (10)")
    p.add_argument("--filter", help='metadata filter, e.g. "acl in [all, hr] and year >= 2024"')
    p.add_argument("--groups", help="search as a user in these ACL groups, comma-separated, e.g. all,hr")
    p.add_argument("--group", action="append", metavar="NAME", help="one more ACL group, verbatim (repeatable)")
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
    p.add_argument("--depth", type=_positive_int, default=1000, help="documents retrieved per query (1000)")
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
    g.add_argument("-k", type=_positive_int, default=5, help="sources given to the reader (5)")
    g.add_argument("--order", choices=("rank", "ends", "reverse"), default="rank", help="source order (rank)")
    g.add_argument("--sample", type=_positive_int, help="N answerable + N unanswerable questions (default: all)")
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
        description="Retrieve, assemble numbered sources, and answer only from them. The index is --index, else "
        "$RAGLINE_INDEX, else ./ragline-index when it exists, else the built-in Orrin Grid demo index (built on "
        "first use, then cached); stderr says which one answered.",
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
    p.add_argument("-k", type=_positive_int, default=5, help="sources retrieved (5)")
    p.add_argument(
        "--order",
        choices=("rank", "ends", "reverse"),
        default="rank",
        help="source order in the prompt: rank, or ends = best at both ends (lost in the middle)",
    )
    p.add_argument("--filter", help="metadata filter applied inside retrieval")
    p.add_argument("--groups", help="ask as a user in these ACL groups, comma-separated, e.g. all,hr")
    p.add_argument("--group", action="append", metavar="NAME", help="one more ACL group, verbatim (repeatable)")
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
    g.add_argument("--k", type=_positive_int, default=5, help="sources per context: 1 gold + k-1 distractors (5)")
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
        # Text, not markup: a path, query or filter in the message keeps its brackets (and a caret its column).
        stderr.print(Text.assemble(("error:", "red"), " ", str(error)))
        return 2
    except KeyboardInterrupt:
        stderr.print("interrupted; the index keeps its last commit")
        return 130


if __name__ == "__main__":
    sys.exit(main())
