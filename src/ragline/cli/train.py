"""``ragline train reranker DATASET --name NAME``: fine-tune a cross-encoder here (see ``ragline.train``)."""

from __future__ import annotations

import argparse
from dataclasses import fields
from typing import Any

from ragline.cli.common import add_common, emit_json, positive_int
from ragline.progress import stderr


def cmd_train(args: argparse.Namespace) -> int:
    from ragline.train.models import check_name, read_card, trained_path
    from ragline.train.reranker import RerankerTraining, train_reranker

    check_name(args.name)
    given = {f.name: getattr(args, f.name) for f in fields(RerankerTraining) if getattr(args, f.name, None) is not None}
    settings = RerankerTraining(**given)
    card = read_card(trained_path(args.name))
    if card and card.get("id") == f"{args.name}@{settings.key()}" and not args.force:
        # Same settings as the saved model: training again would give the same model (seeded), so skip it.
        stderr.print(f"trained:{args.name} is up to date ({trained_path(args.name)}); --force trains it again")
    else:
        card = train_reranker(args.dataset, args.name, settings, log=stderr.print, progress=True)
    if args.output == "json":
        emit_json(card)
    else:
        dev = card["dev"]
        print(
            f"trained:{args.name}: {card['steps']} steps in {card['seconds']} s; dev {dev['metric']}: "
            f"first stage {dev['first_stage']:.4f}, untrained {dev['untrained']:.4f}, trained {dev['best']:.4f}"
        )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "train",
        help="fine-tune a reranker from the packaged MiniLM on a dataset's train split",
        description="Hard negatives are mined by a first-stage retriever (judged positives excluded), a seeded "
        "dev slice of the train queries picks the best step, and the model is saved with a card under "
        "$RAGLINE_CACHE/models/NAME; a pipeline names it as cross:model=trained:NAME. A model already trained "
        "with the same settings is kept (--force trains again); an interrupted run resumes.",
    )
    p.add_argument("kind", choices=("reranker",), help="what to train")
    p.add_argument("dataset", help="BEIR folder with qrels/SPLIT.tsv (e.g. ../shared/bench/scifact)")
    p.add_argument("--name", required=True, help="model name: trained:NAME")
    p.add_argument("--split", help="qrels split to train on (train)")
    p.add_argument("--base", help="model to start from (minilm)")
    p.add_argument("--negatives-from", dest="negatives_from", help="retriever spec that mines negatives (bm25)")
    p.add_argument("--negatives", type=positive_int, help="hard negatives per positive (7)")
    p.add_argument("--mine-depth", dest="mine_depth", type=positive_int, help="negatives sampled from this top (30)")
    p.add_argument("--dev-fraction", dest="dev_fraction", type=float, help="share of train queries for dev (0.1)")
    p.add_argument("--dev-depth", dest="dev_depth", type=positive_int, help="dev candidates reranked (20)")
    p.add_argument("--epochs", type=positive_int, help="passes over the train queries (1)")
    p.add_argument("--max-steps", dest="max_steps", type=positive_int, help="stop after this many steps")
    p.add_argument("--queries-per-step", dest="queries_per_step", type=positive_int, help="queries per step (4)")
    p.add_argument("--learning-rate", dest="learning_rate", type=float, help="AdamW learning rate (5e-5)")
    p.add_argument("--max-length", dest="max_length", type=positive_int, help="word pieces per pair (192)")
    p.add_argument("--eval-every", dest="eval_every", type=positive_int, help="steps between dev evaluations (50)")
    p.add_argument("--patience", type=positive_int, help="evaluations without a dev gain before stopping (3)")
    p.add_argument("--max-queries", dest="max_queries", type=positive_int, help="use only this many queries")
    p.add_argument("--seed", type=int, help="seed of the dev slice, sampling, order and new head (0)")
    p.add_argument("--threads", type=positive_int, help="torch threads (2)")
    p.add_argument("--force", action="store_true", help="train again even when up to date")
    add_common(p, index=False)
    p.set_defaults(func=cmd_train)
