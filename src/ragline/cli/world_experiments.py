"""``ragline experiment chunking``, ``lost-in-the-middle`` and ``conversation``: the experiments that run on the
built-in world itself and print their own results, registered (role ``experiment``) beside the lab experiments of
``ragline.eval.experiments``."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline import __version__
from ragline.cli.common import emit_json, rate
from ragline.components import register
from ragline.eval.experiments import Experiment, llm_of
from ragline.progress import stderr


def lost_in_the_middle(args: argparse.Namespace, corpus: Any) -> int:
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
        emit_json(payload)
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
        cells = [rate(a) for a in curve["accuracy"]]
        table.add_row(Text(spec), str(curve["n"]), *cells, rate(curve["oracle"]["accuracy"]))
        if "orderings" in result:
            ordering = result["orderings"]
            rates = [rate(ordering[order]["accuracy"]) for order in ("rank", "ends", "reverse")]
            orders.add_row(Text(spec), str(ordering["n"]), *rates)
    console.print(table)
    console.print(orders)
    return 0


def conversation(args: argparse.Namespace, corpus: Any, load_llm: Callable[[argparse.Namespace], Any]) -> int:
    """Follow-up turns answered with (``aware``) and without (``blind``) the conversation's history."""
    from ragline.answer.pipeline import RAGPipeline
    from ragline.config import load_config
    from ragline.eval import conversation
    from ragline.eval.harness import config_needs_embeddings
    from ragline.eval.typed import acl_filter
    from ragline.index import Index, IndexSettings
    from ragline.ingest.pipeline import IngestConfig, chunk_documents

    config = load_config((args.config or ["extractive"])[0])
    ingest = IngestConfig(config.ingest.chunker, config.ingest.context)
    embedder = args.embedder if config_needs_embeddings(config) else None
    index = Index.create(
        None, IndexSettings(chunker=ingest.chunker, context=ingest.context, embedder=embedder, vector_index="flat")
    )
    index.add(chunk_documents(corpus.documents, ingest, None)[0])
    index.commit()
    pipeline = RAGPipeline.from_config(config, index)
    llm = None if args.condenser == "rules" else load_llm(args)
    started = time.perf_counter()
    conversations = conversation.follow_ups(corpus.questions, seed=args.sample_seed)
    payload = conversation.run(
        conversations, lambda text, q: pipeline.answer(text, acl_filter(q)), str(config.read.reader), llm
    )
    payload = {
        "experiment": "conversation",
        "corpus": corpus.name,
        "corpus_fingerprint": corpus.fingerprint(),
        "config": config.name,
        "condenser": args.condenser,
        "conversations": len(conversations),
        "wall_s": round(time.perf_counter() - started, 1),
        **payload,
        "provenance": {"ragline_version": __version__},
    }
    if args.output == "json":
        emit_json(payload)
        return 0
    table = Table(title=f"Conversations on {corpus.name}: correct / wrong / abstained, history-blind vs -aware")
    for column in ("turns", "n", "blind", "aware"):
        table.add_column(column, justify="left" if column == "turns" else "right")
    for name, arms in payload["summary"].items():
        cells = [f"{a['correct']} / {a['wrong']} / {a['abstained']}" for a in (arms["blind"], arms["aware"])]
        table.add_row(name, str(arms["blind"]["n"]), *cells)
    Console(width=max(Console().width, 120)).print(table)
    for name, test in payload["paired"].items():
        print(f"{name}: correct {test['mean_a']:.3f} -> {test['mean_b']:.3f}, p = {test['p_randomization']:.4f}")
    return 0


def world(args: argparse.Namespace) -> Any:
    """The built-in Orrin world of ``--seed`` (the evaluation world by default)."""
    from ragline.corpora.orrin import DEFAULT_SEED, build_orrin

    return build_orrin(args.seed if args.seed is not None else DEFAULT_SEED)


def chunking_experiment(args: argparse.Namespace) -> int:
    """Chunker x context x retriever on the built-in world: Hit@1 by question type, the evidence sentences the
    chunks split or cut, and (--reader) each reader's answers."""
    from ragline.eval import chunking

    corpus = world(args)
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


@register("experiment", "chunking")
def chunking() -> Experiment:
    """Chunker x context x retriever; Hit@1 by question type and the share of evidence sentences split by chunk
    boundaries."""
    return Experiment("chunking", chunking_experiment, own_output=True)


@register("experiment", "lost-in-the-middle")
def lost_in_the_middle_experiment() -> Experiment:
    """Accuracy of the extractive reader and an LLM with the gold source at each position among k BM25
    distractors (Liu et al. 2023), and of the context orders rank / ends / reverse."""
    return Experiment("lost-in-the-middle", lambda args: lost_in_the_middle(args, world(args)), own_output=True)


@register("experiment", "conversation")
def conversation_experiment() -> Experiment:
    """Follow-up turns written from the world's questions (the later turn omits what the earlier named) answered
    with and without the history; --config is the pipeline (default extractive)."""
    return Experiment("conversation", lambda args: conversation(args, world(args), llm_of), own_output=True)
