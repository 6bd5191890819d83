"""The ``ragline`` command. Each sub-command is a module here, a thin layer over the library.

Results go to stdout (a table, or with ``--output json`` exactly one line of JSON); progress,
warnings and errors go to stderr. ``COMMANDS`` lists the modules; each has ``add_parser(sub)``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from rich.text import Text

from ragline import __version__
from ragline.errors import RaglineError
from ragline.progress import stderr

COMMANDS = (
    "index", "search", "info", "status", "evaluate", "ask", "corpus", "experiment", "explain", "train", "serve", "keys",
    "doctor",
)

EXAMPLES = """\
examples:
  ragline index ./docs                      index a folder of documents (again: syncs changes)
  ragline search "remote work allowance" --filter "acl in [all, hr]"
  ragline ask "How much is the remote work allowance?" --groups all,hr
  ragline info
  ragline eval ../shared/bench/scifact --retriever bm25 --split test --output json

The index directory is --index, else $RAGLINE_INDEX, else ./ragline-index. `ragline index` cuts documents
into 100-word chunks overlapping by 30 (--chunker none: whole documents) and stamps its
settings in the index; a re-sync reuses them. `ragline ask` without any of the three answers from the
built-in Orrin Grid demo corpus, and says so.
Filters: field=value, field!=value, field<=value (<, >, >=), field in [a, b], with and/or/not and ().
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragline",
        description="Index documents, search them, and measure retrieval quality. Runs offline.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ragline {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"ragline.cli.{name}").add_parser(sub)
    return parser


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
