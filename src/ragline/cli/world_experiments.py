"""``ragline experiment lost-in-the-middle`` and ``conversation``: the experiments that run on the built-in world
itself (``experiment.py`` picks the world and the command)."""

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
