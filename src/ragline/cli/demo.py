"""``ragline demo``: the built-in Orrin Grid knowledge base indexed, searched, answered and measured.

The same tour as ``make demo`` (``ragline.demo``), from an installed package: the corpus and the models ship
inside the wheels, so it runs offline.
"""

from __future__ import annotations

import argparse
from typing import Any

DESCRIPTION = """\
Builds (once; cached in $RAGLINE_CACHE) the built-in Orrin Grid index, asks one question of each type as its
user (permission filter inside retrieval), shows sources, the extractive reader's cited answer and its grade,
two answers streamed from the local LLM, and Hit@1 / Hit@3 by question type for BM25, dense and hybrid.
"""


def cmd_demo(args: argparse.Namespace) -> int:
    from ragline import demo

    return demo.main(llm=not args.no_llm)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="the built-in Orrin Grid knowledge base indexed, searched, answered with citations, measured",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--no-llm", action="store_true", help="skip the two local-LLM answers (the slowest part)")
    p.set_defaults(func=cmd_demo)
