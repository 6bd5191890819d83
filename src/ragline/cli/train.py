"""``ragline train reranker|embedder DATASET --name NAME``: fine-tune a model here (see ``ragline.train``)."""

from __future__ import annotations

import argparse
from dataclasses import fields
from typing import Any

from ragline.cli.common import add_common, emit_json, positive_int
from ragline.errors import ConfigError
from ragline.progress import stderr

# Flags of one kind only: given for the other kind they are an error, not silently ignored.
_ONLY = {
    "reranker": ("negatives", "dev_depth", "queries_per_step", "max_length"),
    "embedder": ("dev_pool", "batch_size", "max_seq_length", "scale"),
}


def _settings(args: argparse.Namespace) -> Any:
    from ragline.train.embedder import EmbedderTraining
    from ragline.train.reranker import RerankerTraining

    kind = EmbedderTraining if args.kind == "embedder" else RerankerTraining
    other = "reranker" if args.kind == "embedder" else "embedder"
    wrong = [name for name in _ONLY[other] if getattr(args, name, None) is not None]
    if wrong:
        flags = ", ".join("--" + name.replace("_", "-") for name in wrong)
        raise ConfigError(f"{flags}: only for `ragline train {other}`, not {args.kind}")
    given = {f.name: getattr(args, f.name) for f in fields(kind) if getattr(args, f.name, None) is not None}
    return kind(**given)


def cmd_train(args: argparse.Namespace) -> int:
    from ragline.train.models import check_name, read_card, trained_path

    check_name(args.name)
    settings = _settings(args)
    card = read_card(trained_path(args.name))
    if card and card.get("id") == f"{args.name}@{settings.key()}" and not args.force:
        # Same settings as the saved model: training again would give the same model (seeded), so skip it.
        stderr.print(f"trained:{args.name} is up to date ({trained_path(args.name)}); --force trains it again")
    elif args.kind == "embedder":
        from ragline.train.embedder import train_embedder

        card = train_embedder(args.dataset, args.name, settings, log=stderr.print, progress=True)
    else:
        from ragline.train.reranker import train_reranker

        card = train_reranker(args.dataset, args.name, settings, log=stderr.print, progress=True)
    if args.output == "json":
        emit_json(card)
    else:
        dev = card["dev"]
        first = f"first stage {dev['first_stage']:.4f}, " if dev.get("first_stage") is not None else ""
        print(
            f"trained:{args.name}: {card['steps']} steps in {card['seconds']} s; dev {dev['metric']}: "
            f"{first}untrained {dev['untrained']:.4f}, trained {dev['best']:.4f}"
        )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "train",
        help="fine-tune a reranker or an embedder from the packaged MiniLM on a dataset's train split",
        description="Hard negatives are mined by a first-stage retriever (judged positives excluded), a seeded "
        "dev slice of the train queries picks the best step, and the model is saved with a card under "
        "$RAGLINE_CACHE/models/NAME; a pipeline names it as trained:NAME (cross:model=trained:NAME for a "
        "reranker; the index's embedder for an embedder). A model already trained with the same settings is "
        "kept (--force trains again); an interrupted run resumes.",
    )
    p.add_argument("kind", choices=("reranker", "embedder"), help="what to train")
    p.add_argument("dataset", help="BEIR folder with qrels/SPLIT.tsv (e.g. ../shared/bench/scifact)")
    p.add_argument("--name", required=True, help="model name: trained:NAME")
    p.add_argument("--split", help="qrels split to train on (train)")
    p.add_argument("--base", help="model to start from (minilm)")
    p.add_argument(
        "--negatives-from",
        dest="negatives_from",
        help="retriever spec that mines negatives (reranker bm25, embedder hybrid)",
    )
    p.add_argument(
        "--mine-depth", dest="mine_depth", type=positive_int, help="negatives sampled from this top (30; 20)"
    )
    p.add_argument("--dev-fraction", dest="dev_fraction", type=float, help="share of train queries for dev (0.1)")
    p.add_argument("--epochs", type=positive_int, help="passes over the train queries (1)")
    p.add_argument("--max-steps", dest="max_steps", type=positive_int, help="stop after this many steps")
    p.add_argument("--learning-rate", dest="learning_rate", type=float, help="AdamW learning rate (5e-5; 3e-5)")
    p.add_argument("--warmup", type=float, help="share of the steps with a rising learning rate (0.1)")
    p.add_argument("--eval-every", dest="eval_every", type=positive_int, help="steps between dev evaluations (50; 16)")
    p.add_argument("--patience", type=positive_int, help="evaluations without a dev gain before stopping (3)")
    p.add_argument("--max-queries", dest="max_queries", type=positive_int, help="use only this many queries")
    p.add_argument("--seed", type=int, help="seed of the dev slice, sampling, order and new weights (0)")
    p.add_argument("--threads", type=positive_int, help="torch threads (2)")
    reranker = p.add_argument_group("reranker only")
    reranker.add_argument("--negatives", type=positive_int, help="hard negatives per positive (7)")
    reranker.add_argument("--dev-depth", dest="dev_depth", type=positive_int, help="dev candidates reranked (20)")
    reranker.add_argument("--queries-per-step", dest="queries_per_step", type=positive_int, help="queries a step (4)")
    reranker.add_argument("--max-length", dest="max_length", type=positive_int, help="word pieces per pair (192)")
    embedder = p.add_argument_group("embedder only")
    embedder.add_argument(
        "--dev-pool", dest="dev_pool", type=positive_int, help="per dev query, BM25's and MiniLM's top in the pool (5)"
    )
    embedder.add_argument("--batch-size", dest="batch_size", type=positive_int, help="queries a step (16)")
    embedder.add_argument("--max-seq-length", dest="max_seq_length", type=positive_int, help="word pieces (256)")
    embedder.add_argument("--scale", type=float, help="similarity scale of the in-batch softmax (20)")
    p.add_argument("--force", action="store_true", help="train again even when up to date")
    add_common(p, index=False)
    p.set_defaults(func=cmd_train)
