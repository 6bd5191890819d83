"""``ragline corpus NAME``: write a built-in corpus as BEIR files or Markdown."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.text import Text

from ragline.cli.common import (
    add_common,
    emit_json,
)


def cmd_corpus(args: argparse.Namespace) -> int:
    from ragline.corpora.base import Corpus
    from ragline.corpora.countries import build_countries
    from ragline.corpora.export import export_beir, write_markdown_folder
    from ragline.corpora.orrin import DEFAULT_SEED, TRAIN_SEED, build_orrin

    corpus: Corpus
    if args.name == "orrin":
        corpus = build_orrin(TRAIN_SEED if args.train else args.seed or DEFAULT_SEED)
    else:
        language = "zh" if args.name == "countries-zh" else "en"
        corpus = build_countries(**({"seed": args.seed} if args.seed else {}), language=language)
    if args.aggregate:
        from ragline.corpora.aggregate import with_aggregate

        corpus = with_aggregate(corpus)
    write = export_beir if args.format == "beir" else write_markdown_folder
    out = write(corpus, args.out)
    result = {
        "corpus": corpus.name,
        "documents": len(corpus.documents),
        "questions": len(corpus.questions),
        "fingerprint": corpus.fingerprint(),
        "path": str(out),
        "format": args.format,
    }
    if args.aggregate:
        from ragline.corpora.aggregate import AGGREGATE_VERSION

        result["aggregate_version"] = AGGREGATE_VERSION
    if args.output == "json":
        emit_json(result)
    else:
        Console().print(
            Text(f"{result['corpus']}: {result['documents']} documents, {result['questions']} questions -> {out}")
        )
    return 0


def add_parser(sub: Any) -> None:
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
    p.add_argument(
        "--aggregate",
        action="store_true",
        help="append the aggregate/global questions (comparison, listing, counting, theme; versioned) "
        "to the world's questions; documents unchanged",
    )
    add_common(p, index=False)
    p.set_defaults(func=cmd_corpus)
