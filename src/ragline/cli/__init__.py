"""The ``ragline`` command. Each sub-command is a module here, a thin layer over the library.

Results go to stdout (a table, or with ``--output json`` exactly one line of JSON); progress,
warnings and errors go to stderr. ``COMMANDS`` lists the modules; each has ``add_parser(sub)``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import MutableMapping

from rich.text import Text

from ragline import __version__
from ragline.errors import RaglineError
from ragline.progress import stderr

COMMANDS = (
    "index",
    "search",
    "info",
    "status",
    "evaluate",
    "ask",
    "corpus",
    "experiment",
    "explain",
    "train",
    "serve",
    "keys",
    "doctor",
    "mcp",
    "demo",
)
# The name a user types -> the module of that sub-command.
COMMAND_NAMES = {**{name: name for name in COMMANDS if name != "evaluate"}, "eval": "evaluate"}

EXAMPLES = """\
examples:
  ragline index ./docs                      index a folder of documents (again: syncs changes)
  ragline search "remote work allowance" --filter "acl in [all, hr]"
  ragline ask "How much is the remote work allowance?" --groups all,hr
  ragline info
  ragline demo                              the built-in Orrin Grid knowledge base, end to end
  ragline eval ../shared/bench/scifact --retriever bm25 --split test --output json

The index directory is --index, else $RAGLINE_INDEX, else ./ragline-index. `ragline index` cuts documents
into chunks of whole sentences, 128 word pieces at most, overlapping by a sentence (--chunker none: whole
documents) and stamps its
settings in the index; a re-sync reuses them. `ragline ask` without any of the three answers from the
built-in Orrin Grid demo corpus, and says so.
Filters: field=value, field!=value, field<=value (<, >, >=), field in [a, b], with and/or/not and ().
"""


def command_module(argv: list[str]) -> str | None:
    """The module of the sub-command ``argv`` runs, None when it names none (help, a typo, --version)."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    if first is None:
        return None
    return COMMAND_NAMES.get(first)


# Commands that answer one query. Their matrix products (the query encoder's) are too small to share between
# BLAS threads, and OpenBLAS's second thread spins while the process runs: on cores busy with other work a
# hybrid search took 0.4-1.0 s instead of 0.18-0.21 s (BENCHMARKS.md, "Speed"). Indexing and evaluation
# multiply large matrices and keep the default.
ONE_QUERY_COMMANDS = ("search", "ask", "explain")


def one_query_blas(argv: list[str], environ: MutableMapping[str, str]) -> None:
    """One OpenBLAS thread for a one-query command, set before numpy loads; a value the user set wins."""
    if command_module(argv) in ONE_QUERY_COMMANDS:
        environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given ``argv`` that names a sub-command, with only that one registered.

    Each sub-command module imports what it runs on (numpy, the index, ingestion, the corpora);
    registering only the invoked one keeps a command from paying for the others' imports.
    """
    parser = argparse.ArgumentParser(
        prog="ragline",
        description="Index documents, search them, and measure retrieval quality. Runs offline.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ragline {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    only = command_module(argv) if argv is not None else None
    for name in (only,) if only else COMMANDS:
        importlib.import_module(f"ragline.cli.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    one_query_blas(argv, os.environ)
    args = build_parser(argv).parse_args(argv)
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
