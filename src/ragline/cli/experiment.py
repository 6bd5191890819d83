"""``ragline experiment NAME``: rerun a lecture experiment on the built-in corpora or a ``--dataset`` folder."""

from __future__ import annotations

import argparse
import time
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline import __version__
from ragline.cli import world_experiments
from ragline.cli.common import (
    add_common,
    component_help,
    component_spec,
    emit_json,
    positive_int,
)
from ragline.errors import ConfigError
from ragline.progress import stderr


def cmd_experiment(args: argparse.Namespace) -> int:
    from ragline.corpora.orrin import DEFAULT_SEED, build_orrin
    from ragline.eval import chunking

    if args.name in LAB_EXPERIMENTS:
        return _lab_experiment(args)
    corpus = build_orrin(args.seed if args.seed is not None else DEFAULT_SEED)
    if args.name == "conversation":
        return world_experiments.conversation(args, corpus, _llm)
    if args.name == "lost-in-the-middle":
        return world_experiments.lost_in_the_middle(args, corpus)
    if args.documents:
        corpus = chunking.sample_corpus(corpus, args.documents, args.sample_seed)
    rows = chunking.run(
        corpus,
        chunkers=args.chunker or chunking.CHUNKERS,
        contexts=args.context or chunking.CONTEXTS,
        retrievers=args.retriever or chunking.RETRIEVERS,
        embedder=args.embedder,
        readers=args.reader or (),
    )
    payload = {
        "experiment": args.name,
        "corpus": corpus.name,
        "corpus_fingerprint": corpus.fingerprint(),
        "rows": rows,
        "paired": chunking.paired_against_first(rows),
        "provenance": {"ragline_version": __version__, "embedder": args.embedder},
    }
    if args.output == "json":
        emit_json(payload)
        return 0
    types = [t for t in rows[0]["by_type"] if t != "all"] if rows else []
    table = Table(
        title=f"Chunking on {corpus.name}: Hit@1 by question type, Recall@5 of all gold documents "
        "(split = evidence sentences no chunk holds whole; cut = ... some chunk holds a part of)"
    )
    recall = [t for t in ("multihop", "all") if t in types or t == "all"]
    readers = list(args.reader or ())
    columns = (
        "chunker",
        "context",
        "retriever",
        "chunks",
        "chunk s",
        "LLM calls",
        "LLM tokens",
        "split",
        "cut",
        *types,
        "all",
    )
    for column in (*columns, *(f"{t} R@5" for t in recall), *(f"{r} correct" for r in readers)):
        table.add_column(column, justify="left" if column in ("chunker", "context", "retriever") else "right")
    for row in rows:
        hits = [row["by_type"][t]["hit@1"] for t in [*types, "all"]]
        hits += [row["by_type"][t].get("recall@5") for t in recall]
        cells = ["—" if h is None else f"{h:.2f}" for h in hits]
        cells += [f"{row['answers'][r]['correct']}/{len(corpus.questions)}" for r in readers]
        cost = row["chunking_cost"]  # LLM calls: answered by the model (+ from the response cache)
        calls = f"{cost['llm_calls']} (+{cost['cached_calls']})" if "llm_calls" in cost else "—"
        tokens = f"{cost['prompt_tokens']}+{cost['reply_tokens']}" if "llm_calls" in cost else "—"
        table.add_row(
            Text(row["chunker"]),
            row["context"],
            row["retriever"],
            str(row["chunks"]),
            f"{cost['seconds']:.1f}",
            calls,
            tokens,
            f"{row['split_evidence']:.0%}",
            f"{row['cut_evidence']:.0%}",
            *cells,
        )
    Console(width=max(Console().width, 160)).print(table)
    return 0


# Experiments of ragline.eval.experiments: module name, whether it needs embeddings.
LAB_EXPERIMENTS = {
    "scorers": ("scorers", False),
    "rrf-k": ("fusion", True),
    "embedding-probe": ("embedding_probe", True),
    "dense-transfer": ("dense_transfer", True),
    "readers": ("readers", True),
    "knowledge-update": ("knowledge_update", False),
    "small-to-big": ("small_to_big", True),
    "reader-ablations": ("reader_ablations", False),
    "reflection": ("reflection", False),
    "raptor": ("raptor", True),
    "graph": ("graph", False),
    "rag-sequence": ("rag_sequence", False),
}


def _configs(args: argparse.Namespace) -> list[Any]:
    from ragline.config import load_config

    return [load_config(source) for source in args.config or []]


def _llm(args: argparse.Namespace) -> Any:
    """The LLM of ``--llm`` (cached), or None for ``--llm none`` / ``--closed-book 0``."""
    from ragline.answer.pipeline import build_reader

    if args.llm in ("", "none") or args.closed_book == 0:
        return None
    return build_reader(args.llm).llm


def _run_lab(args: argparse.Namespace, module: Any) -> dict[str, Any]:
    from ragline.eval.experiments import load_workload

    configs = _configs(args)
    if configs and args.name not in ("dense-transfer", "readers"):
        raise ConfigError(f"--config: experiment {args.name!r} takes no pipeline configs (dense-transfer, readers do)")
    if args.name == "embedding-probe":
        queries = None
        if args.dataset:
            from ragline.eval.datasets import load_dataset

            queries = list(load_dataset(args.dataset, "test").judged_queries.values())[: args.limit]
        return module.run(dataset_queries=queries)
    if args.name == "small-to-big":
        sets = [module.dataset_set(args.dataset, args.limit)] if args.dataset else [module.orrin_set(args.seed)]
        return module.run(sets, args.embedder, retrievers=args.retriever or module.RETRIEVERS)
    if args.name == "reader-ablations":
        if not args.dataset:
            raise ConfigError(
                "reader-ablations needs --dataset DIR: questions with their own passages "
                "(e.g. ../shared/bench/squad_v2_dev_subset)"
            )
        return module.run(args.dataset, args.span_model or [], args.limit or module.DEFAULT_LIMIT)
    if args.name == "reflection":
        from ragline.corpora import countries, orrin
        from ragline.reflect.worlds import countries_world, orrin_world

        if args.world == "countries":
            world = countries_world(args.seed if args.seed is not None else countries.DEFAULT_SEED)
        else:
            world = orrin_world(args.seed if args.seed is not None else orrin.DEFAULT_SEED)
        per_type = module.DEFAULT_PER_TYPE if args.questions is None else args.questions  # 0: closed-book only
        names = tuple(args.arm or module.ARMS)
        log = lambda m: stderr.print(m, highlight=False, markup=False)  # noqa: E731
        return module.run(world, llm=_llm(args), per_type=per_type, seed=args.sample_seed, log=log, names=names)

    if args.name == "raptor":
        from ragline.corpora.orrin import DEFAULT_SEED

        arms: dict[str, str] | None = {spec: spec for spec in args.retriever} if args.retriever else None
        if args.global_search:
            arms = {**(arms or module.ARMS), args.global_search: args.global_search}
        return module.run(
            args.seed if args.seed is not None else DEFAULT_SEED,
            arms,
            embedder=args.embedder,
            llm=_llm(args) if args.llm_chunks else None,
            llm_chunks=args.llm_chunks,
            reader=args.reader[0] if args.reader else None,
            read_per_type=args.read_per_type,
        )

    if args.name == "graph":
        return module.run(args.seed, retrievers=args.retriever or module.RETRIEVERS)

    if args.name == "rag-sequence":
        return _rag_sequence(args, module)
    if args.name == "knowledge-update":
        return module.run(llm=_llm(args), llm_questions=min(args.closed_book, 40))
    if args.name == "dense-transfer":
        workload = (
            load_workload(args.dataset, args.embedder, args.limit)
            if args.dataset
            else module.countries_workload(args.embedder)
        )
        return module.run(workload, module.RETRIEVERS, pipelines=configs)
    if args.name == "readers":
        from ragline.eval.experiments.dense_transfer import countries_workload

        if args.dataset:
            corpus, index = module.dataset_corpus(args.dataset, args.embedder, args.limit)
        else:
            from ragline.corpora.countries import build_countries

            corpus, index = build_countries(), countries_workload(args.embedder).index
        return module.run(corpus, index, llm=_llm(args), closed_book_questions=args.closed_book, pipelines=configs)
    return module.run(load_workload(args.dataset, args.embedder if LAB_EXPERIMENTS[args.name][1] else None, args.limit))


def _rag_sequence(args: argparse.Namespace, module: Any) -> dict[str, Any]:
    """RAG-Sequence on a sample of --dataset's questions (whole passages) or an Orrin world (the training
    world unless --seed says otherwise, each question asked as its user)."""
    from ragline.answer.pipeline import build_reader
    from ragline.eval.experiments.readers import dataset_corpus
    from ragline.eval.typed import acl_filter

    if args.llm in ("", "none"):
        raise ConfigError("rag-sequence needs an LLM reader: --llm llm:model=...")
    retriever = (args.retriever or ["bm25"])[0]
    embedder = None if retriever == "bm25" else args.embedder
    if args.dataset:
        corpus, index = dataset_corpus(args.dataset, embedder, args.limit)
        filter_of = None
    else:
        corpus, index = module.orrin_set(args.seed, embedder)
        filter_of = acl_filter
    questions = module.DEFAULT_QUESTIONS if args.questions is None else args.questions
    log = lambda message: stderr.print(message, highlight=False, markup=False)  # noqa: E731
    return module.run(
        corpus,
        index,
        build_reader(args.llm),
        k=args.k,
        questions=questions,
        seed=args.sample_seed,
        retriever=retriever,
        filter_of=filter_of,
        log=log,
    )


def _lab_experiment(args: argparse.Namespace) -> int:
    import importlib

    module_name, _ = LAB_EXPERIMENTS[args.name]
    module = importlib.import_module(f"ragline.eval.experiments.{module_name}")
    if args.plot and not hasattr(module, "plot"):
        # Before the run, which can take minutes: the flag is wrong whatever the run gives.
        raise ConfigError(f"--plot: experiment {args.name!r} has no plot (scorers, rrf-k and readers do)")
    started = time.perf_counter()
    payload = _run_lab(args, module)
    payload["wall_s"] = round(time.perf_counter() - started, 1)
    payload["provenance"] = {
        "ragline_version": __version__,
        "dataset": args.dataset,
        "embedder": args.embedder,
        "configs": list(args.config or []),
    }
    if args.plot:
        module.plot(payload, args.plot)
    if args.output == "json":
        emit_json(payload)
        return 0
    console = Console(width=max(Console().width, 160))
    for table in module.tables(payload):
        console.print(table)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "experiment",
        help="rerun a lecture experiment on a built-in corpus (Orrin Grid, countries) or a --dataset folder",
        description="chunking: chunker x context x retriever; Hit@1 by question type and the share of "
        "evidence sentences split by chunk boundaries. lost-in-the-middle: accuracy of the extractive reader "
        "and an LLM with the gold source at each position among k BM25 distractors (Liu et al. 2023), and "
        "of the context orders rank / ends / reverse. scorers: word overlap vs TF-IDF vs BM25 by question type, "
        "k1 x b grids, keyword stuffing. rrf-k: RRF k swept against min-max and z-score, exclusive finds vs "
        "consensus, and one outlier BM25 score. embedding-probe: cosine of paraphrases vs near-identical codes. "
        "dense-transfer: BM25 vs dense vs hybrid on the relations the lecture holds out. readers: closed book vs "
        "oracle vs RAG at k 1 and 5, and the k sweep. knowledge-update: edit a document, then a conflicting one. "
        "small-to-big: small chunks read as they are, with a sentence window or as their section, vs plain chunks, "
        "at equal budgets: gold chunk at 1 and read vs share of the evidence in the context. reader-ablations: "
        "the span reader with/without no-answer training, window size, span length limit, passages k. reflection: "
        "always-retrieve vs Self-RAG vs CRAG vs routed vs the agent on a stratified sample (--questions per type, "
        "--sample-seed) and every closed-book question: outcomes, retrievals, model calls, seconds, paired tests. "
        "raptor: hybrid vs the agent vs RAPTOR (collapsed, traversal, UMAP) per question type on Orrin with its "
        "aggregate questions, 10 passages each: questions with all evidence in the context; the tree's cost per "
        "1,000 chunks. conversation: follow-up turns written from the world's questions (the later turn omits what "
        "the earlier named) answered with and without the history; --config is the pipeline (default extractive). "
        "rag-sequence: "
        "an answer per passage scored by retrieval probability x the answer's probability (Lewis et al.'s fast "
        "decoding) vs the LLM reading the k passages at once, on a --questions sample (Orrin training world "
        "or --dataset).",
    )
    p.add_argument("name", choices=("chunking", "lost-in-the-middle", "conversation", *LAB_EXPERIMENTS))
    p.add_argument(
        "--dataset",
        metavar="DIR",
        help="lab experiments: a BEIR or questions folder "
        "(default: Orrin Grid; the countries world for dense-transfer and readers)",
    )
    p.add_argument("--limit", type=positive_int, help="lab experiments: the first N judged queries of --dataset")
    p.add_argument(
        "--config",
        action="append",
        metavar="FILE",
        help="dense-transfer, readers: a pipeline config (file or shipped name) run as one more row, repeatable; "
        "conversation: the pipeline both arms answer with",
    )
    p.add_argument(
        "--span-model",
        action="append",
        metavar="MODEL",
        help="reader-ablations: a span reader model (trained:NAME), repeatable; the first is ablated",
    )
    p.add_argument(
        "--closed-book",
        type=int,
        default=40,
        metavar="N",
        help="readers, knowledge-update: questions asked to the --llm with no source (40; 0 = none; cached)",
    )
    p.add_argument("--chunker", action="append", metavar="SPEC", help="chunker spec, repeatable (default: a sweep)")
    p.add_argument(
        "--documents",
        type=positive_int,
        metavar="N",
        help="chunking: a sample of at most N documents (those of questions drawn with --sample-seed) and the "
        "questions they answer, for chunkers that cost model time (llm)",
    )
    p.add_argument("--context", action="append", choices=("none", "breadcrumb", "late", "llm"), help="repeatable")
    p.add_argument(
        "--reader",
        action="append",
        metavar="SPEC",
        help="chunking: also answer every question with "
        "this reader over each row's top 5 (extractive, llm:...), repeatable; reports correct / wrong / "
        "abstained and a paired test against the first --chunker. raptor: the reader of every arm's passages "
        "for the aggregate questions (the first one given)",
    )
    p.add_argument(
        "--retriever",
        action="append",
        type=component_spec("retriever"),
        metavar="SPEC",
        help=component_help("retriever", "retriever spec, repeatable (default: bm25, dense, hybrid)"),
    )
    p.add_argument(
        "--global-search",
        nargs="?",
        const="global-search",
        type=component_spec("reader"),
        metavar="SPEC",
        help="raptor: also an arm of the global-search reader's own answers (GraphRAG global search; its reduce "
        "reader is aggregate unless SPEC says reader=...)",
    )
    p.add_argument("--seed", type=int, help="corpus seed (default: the evaluation world)")
    p.add_argument(
        "--world",
        choices=("orrin", "countries"),
        default="orrin",
        help="reflection: the built-in world, with its closed-book questions (orrin)",
    )
    p.add_argument(
        "--arm",
        action="append",
        choices=(
            "always-retrieve",
            "always-retrieve (llm)",
            "self-rag",
            "crag",
            "routed",
            "agent",
            "agent (own chunks)",
        ),
        help="reflection: an arm to run, repeatable (default: all but always-retrieve (llm), which reads with --llm)",
    )
    p.add_argument(
        "--read-per-type",
        type=int,
        default=0,
        metavar="N",
        help="raptor: keep only the first N questions of each aggregate type (a sample for an LLM --reader; 0 = all)",
    )
    p.add_argument(
        "--llm-chunks",
        type=int,
        default=0,
        metavar="N",
        help="raptor: also build a tree with LLM summaries (--llm) over the first N chunks, for its cost (0 = none)",
    )
    p.add_argument(
        "--condenser",
        choices=("rules", "llm"),
        default="rules",
        help="conversation: how a follow-up becomes a standalone question (llm: the --llm rewrites, rules stand in)",
    )
    p.add_argument("--embedder", default="minilm", help="embedding model (minilm)")
    g = p.add_argument_group("lost-in-the-middle (--chunker: the first one, default fixed:size=100,overlap=30)")
    g.add_argument("--k", type=positive_int, default=5, help="sources per context: 1 gold + k-1 distractors (5)")
    g.add_argument(
        "--questions",
        type=int,
        help="LLM sample size, stratified by type (default 9; 0 = all); "
        "reflection: questions per type (6; 0: closed-book only)",
    )
    g.add_argument("--sample-seed", type=int, default=0, help="seed of the question sample (0; reflection too)")
    g.add_argument(
        "--llm",
        default="llm:model=local:qwen2.5-coder-0.5b,max_tokens=64",
        help="LLM reader spec, or none for the extractive reader only",
    )
    g.add_argument(
        "--plot", metavar="PNG", help="write the experiment's plot here (lost-in-the-middle, scorers, rrf-k, readers)"
    )
    add_common(p, index=False)
    p.set_defaults(func=cmd_experiment)
