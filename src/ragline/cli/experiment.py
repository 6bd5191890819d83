"""``ragline experiment NAME``: rerun a lecture experiment on the built-in corpora or a ``--dataset`` folder."""

from __future__ import annotations

import argparse
import textwrap
import time
from typing import Any

from rich.console import Console

from ragline import __version__
from ragline.cli.common import (
    add_common,
    component_help,
    component_spec,
    emit_json,
    positive_int,
)
from ragline.errors import ConfigError


def cmd_experiment(args: argparse.Namespace) -> int:
    from ragline.components import build

    experiment = build("experiment", {"name": args.name})
    if experiment.own_output:
        return int(experiment.run(args))
    return _lab_experiment(args, experiment)


def _lab_experiment(args: argparse.Namespace, experiment: Any) -> int:
    """Run a registered experiment, stamp its time and provenance, and print its tables or one JSON line."""
    from ragline.components import build, names

    # Before the run, which can take minutes: the flags are wrong whatever the run gives.
    if args.plot and experiment.plot is None:
        drawn = [n for n in names("experiment") if build("experiment", {"name": n}).plot is not None]
        raise ConfigError(f"--plot: experiment {args.name!r} has no plot ({', '.join(drawn)} do)")
    if args.config and not experiment.configs:
        takes = [n for n in names("experiment") if build("experiment", {"name": n}).configs]
        raise ConfigError(f"--config: experiment {args.name!r} takes no pipeline configs ({', '.join(takes)} do)")
    started = time.perf_counter()
    payload = experiment.run(args)
    payload["wall_s"] = round(time.perf_counter() - started, 1)
    payload["provenance"] = {
        "ragline_version": __version__,
        "dataset": args.dataset,
        "embedder": args.embedder,
        "configs": list(args.config or []),
    }
    if args.plot:
        experiment.plot(payload, args.plot)
    if args.output == "json" or experiment.tables is None:
        emit_json(payload)
        return 0
    console = Console(width=max(Console().width, 160))
    for table in experiment.tables(payload):
        console.print(table)
    return 0


def experiment_list() -> str:
    """Every registered experiment with its summary (its factory's docstring), for ``--help``."""
    from ragline.components import components

    return "\n".join(
        textwrap.fill(f"{name}: {entry.description}", 100, initial_indent="  ", subsequent_indent="    ")
        for name, entry in sorted(components("experiment").items())
    )


def add_parser(sub: Any) -> None:
    from ragline.components import names

    p = sub.add_parser(
        "experiment",
        help="rerun a lecture experiment on a built-in corpus (Orrin Grid, countries) or a --dataset folder",
        description="experiments (registered: role experiment):\n" + experiment_list(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", choices=names("experiment"), metavar="NAME", help="the experiment (listed above)")
    p.add_argument(
        "--dataset",
        metavar="DIR",
        help="lab experiments: a BEIR or questions folder "
        "(default: Orrin Grid; the countries world for dense-transfer and readers). reflection: a QA folder "
        "with questions.jsonl (e.g. HotpotQA) instead of --world, every passage in one index",
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
        "for the aggregate questions (the first one given). reflection: the reader of every arm (extractive; "
        "span:model=trained:squad for short-answer sets such as HotpotQA)",
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
        help="raptor: also build a tree with LLM summaries (--llm) over the first N chunks, for its cost; graph: "
        "also a graph with the LLM entity extractor (--llm) over the first N chunks (0 = none)",
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
