"""What the sub-commands share: where the index is, JSON output, filters for a principal, shared flags."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragline.errors import RaglineError
from ragline.index import VARIANTS, BM25Params, Index
from ragline.progress import stderr
from ragline.text import PRESETS, Analyzer

if TYPE_CHECKING:
    from ragline.config import PipelineConfig
    from ragline.principals import Principal

DEFAULT_INDEX = "ragline-index"


def index_location(args: argparse.Namespace) -> Path | None:
    """The index a command uses: --index, else $RAGLINE_INDEX, else ./ragline-index when it exists, else None."""
    given = getattr(args, "index", None) or os.environ.get("RAGLINE_INDEX")
    if given:
        return Path(given)
    default = Path(DEFAULT_INDEX)
    return default if default.exists() else None


def add_store_flag(p: argparse.ArgumentParser, verb: str) -> None:
    p.add_argument(
        "--store",
        metavar="URI",
        help=f"{verb} a collection on a store instead of --index: milvus://[user:password@]HOST:PORT/NAME, "
        "postgresql://[user[:password]@]HOST[:PORT]/DATABASE/COLLECTION (filled by `ragline index --store`), "
        "file://PATH or a folder",
    )


def opened_store(args: argparse.Namespace) -> tuple[Any, str] | None:
    """``--store URI`` opened for reading (never created), and how to name it (no password); None without it.

    A folder or ``file://`` is the embedded ``Index`` itself (every retriever runs on it); another scheme is
    that store's collection (``ragline.store``), on which the retrievers rank through its own searches.
    """
    uri = getattr(args, "store", None)
    if not uri:
        return None
    if getattr(args, "index", None):
        raise RaglineError("give --index or --store, not both")
    from ragline.store import open_store, store_scheme

    collection = open_store(uri, create=False)
    if store_scheme(uri) == "file":
        return collection.index, str(collection.index.path)
    return collection, str(getattr(collection, "uri", uri))


def index_path(args: argparse.Namespace) -> Path:
    """Where `index` writes and `search`/`info` read (opening a missing one says how to create it)."""
    return index_location(args) or Path(DEFAULT_INDEX)


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (-k 0 or -k -1 would return nothing, silently)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def emit_json(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")


def bm25_params(args: argparse.Namespace, base: BM25Params) -> BM25Params:
    return BM25Params(
        variant=args.variant or base.variant,
        k1=base.k1 if args.k1 is None else args.k1,
        b=base.b if args.b is None else args.b,
        delta=base.delta if args.delta is None else args.delta,
    )


def parse_fields(spec: str) -> dict[str, float]:
    fields = {}
    for part in spec.split(","):
        name, _, weight = part.partition("=")
        try:
            fields[name.strip()] = float(weight) if weight else 1.0
        except ValueError:
            raise RaglineError(
                f"--fields: weight {weight!r} of {name!r} is not a number (e.g. title=2,text=1)"
            ) from None
    return fields


def principal_of(args: argparse.Namespace) -> Principal:
    """The principal a command runs as: ``--as USER`` of ``--principals FILE``, or ``--groups``/``--group``."""
    from ragline.principals import resolve_principal

    groups = None
    if args.groups is not None or args.group:
        groups = [g.strip() for g in (args.groups or "").split(",") if g.strip()] + list(args.group or [])
    return resolve_principal(args.principals, args.as_user, groups)


def restricted_filter(args: argparse.Namespace) -> tuple[Any, str | None]:
    """``--filter`` joined (as trees) to the principal's ACL restriction, and its text for reports.

    No principal given: no restriction. Groups given but naming none (``--groups ""``): nothing is visible.
    """
    from ragline.index.filters import filter_text, restrict

    restriction = principal_of(args).restriction()
    if restriction is None:
        return args.filter, args.filter
    combined = restrict(args.filter, restriction)
    return combined, filter_text(combined)


def add_principal_flags(p: argparse.ArgumentParser, verb: str) -> None:
    g = p.add_argument_group("who is asking (the ACL filter applies inside retrieval)")
    g.add_argument("--groups", help=f"{verb} as a user in these ACL groups, comma-separated, e.g. all,hr")
    g.add_argument("--group", action="append", metavar="NAME", help="one more ACL group, verbatim (repeatable)")
    g.add_argument("--principals", metavar="FILE", help="users and their groups (TOML/YAML/JSON, a [users] table)")
    g.add_argument("--as", dest="as_user", metavar="USER", help=f"{verb} as USER of --principals (not with --groups)")


def report_embeddings(index: Index) -> None:
    """Say on stderr how many passages were embedded and how many came from the cache."""
    counts = index.embedding_counts()
    if counts is not None:
        stderr.print(f"embeddings: {counts['computed']} computed, {counts['cached']} from cache ({counts['id']})")


def default_metrics() -> tuple[str, ...]:
    from ragline.eval.retrieval import DEFAULT_METRICS

    return DEFAULT_METRICS


def rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


# -- rendering hits ---------------------------------------------------------------------------------
_WORD = re.compile(r"\w+")


def snippet(
    text: str, terms: set[str], analyzer: Analyzer, width: int = 200, analyzed: dict[str, list[str]] | None = None
) -> str:
    """A window of ``text`` (whitespace flattened) around the query terms, "…" where it is cut.

    The window starts a little before the first term match of the stretch that holds the most distinct
    query terms; words are matched through the index's analyzer, so "policies" finds "policy".
    ``analyzed`` (word -> its terms) may be shared by the snippets of one result list: their words repeat.
    """
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    analyzed = {} if analyzed is None else analyzed
    matches = []  # (offset, term) of every word that is a query term
    for word in _WORD.finditer(flat) if terms else ():
        key = word.group()
        if key not in analyzed:
            analyzed[key] = analyzer(key)
        matches.extend((word.start(), term) for term in analyzed[key] if term in terms)
        if len(matches) >= 200:  # enough candidates; a long document would make the window search slow
            break
    start = 0
    if matches:
        lead = width // 5  # a few words of the text before the match
        best = max(
            range(len(matches)),
            key=lambda i: (len({t for at, t in matches[i:] if at < matches[i][0] + width - lead}), -i),
        )
        start = max(0, matches[best][0] - lead)
        if start > 0:  # begin at a word
            space = flat.find(" ", start)
            start = space + 1 if 0 <= space < matches[best][0] else matches[best][0]
    end = min(len(flat), start + width - 2)
    if end < len(flat):  # end at a word
        space = flat.rfind(" ", start, end)
        end = space if space > start else end
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")


# -- flags shared by several commands ---------------------------------------------------------------


def add_common(p: argparse.ArgumentParser, index: bool = True) -> None:
    if index:
        p.add_argument("--index", help="index directory (default: $RAGLINE_INDEX, else ./ragline-index)")
    p.add_argument("--output", choices=("table", "json"), default="table", help="json: one line on stdout")


def add_bm25_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("BM25 (defaults: the index's, else lucene k1=0.9 b=0.4 as Anserini)")
    g.add_argument("--variant", choices=VARIANTS, help="BM25 variant (see docs/bm25.md)")
    g.add_argument("--k1", type=float, help="term-frequency saturation (0.9)")
    g.add_argument("--b", type=float, help="length normalization, 0..1 (0.4)")
    g.add_argument("--delta", type=float, help="bm25l / bm25+ lower bound (0.5)")


def add_analysis_flags(p: argparse.ArgumentParser, stamped: bool = False) -> None:
    # Every default is None: a flag left out keeps the pipeline config's setting (and in `index`, an
    # existing index's stamped one).
    than = " (default: the index's, else the config's: {})" if stamped else " (default: the config's: {})"
    p.add_argument(
        "--analyzer",
        choices=sorted(PRESETS),
        help="text analysis" + than.format("english"),
    )
    p.add_argument(
        "--embedder",
        help="embedding model name or folder (minilm = all-MiniLM-L6-v2, multilingual-e5-small)"
        + than.format("minilm")
        + ("; 'none' for BM25 only" if stamped else ""),
    )
    p.add_argument(
        "--vector-index",
        help="ANN index spec: flat, hnsw[:m=32,ef_search=128], ivf[:nprobe=16], ivfpq" + than.format("hnsw"),
    )
    p.add_argument(
        "--fields",
        help="indexed fields and weights: body (title+text), or title=2,text=1" + than.format("body"),
    )


# -- pipeline configs -------------------------------------------------------------------------------------
def add_config_flag(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--config",
        metavar="FILE|NAME",
        help="pipeline config: a TOML, YAML or JSON file, or a shipped pipeline by name (default, extractive, "
        f"bm25, ...); without it: {default}. Flags given on the command line override the config",
    )


def resolve_config(args: argparse.Namespace, base: str | PipelineConfig) -> PipelineConfig:
    """``--config`` (else ``base``: a shipped pipeline's name or a config), with the flags given applied on top.

    A config whose ACL filter runs after top-k is refused (``require_safe``): only ``ragline doctor`` runs it.
    """
    from ragline.config import load_config, require_safe

    given = getattr(args, "config", None)
    config = load_config(given) if given else load_config(base) if isinstance(base, str) else base
    ingest = {key: getattr(args, key) for key in ("chunker", "context") if _flag(args, key) is not None}
    index = {key: getattr(args, key) for key in ("analyzer", "embedder", "vector_index") if _flag(args, key)}
    if _flag(args, "fields"):
        index["fields"] = parse_fields(args.fields)
    bm25 = {key: getattr(args, key) for key in ("variant", "k1", "b", "delta") if _flag(args, key) is not None}
    if bm25:
        index["bm25"] = {**config.index.bm25, **bm25}
    retrieve = {"retriever": args.retriever} if isinstance(_flag(args, "retriever"), str) else {}
    if args.command in ("ask", "eval") and _flag(args, "k") is not None:
        retrieve["k"] = args.k
    order = {"order": args.order} if _flag(args, "order") else {}
    read = {"reader": args.reader} if _flag(args, "reader") else {}
    config = config.with_overrides(ingest=ingest, index=index, retrieve=retrieve, order=order, read=read)
    return require_safe(config, str(getattr(args, "command", None) or "this command"))


def _flag(args: argparse.Namespace, name: str) -> Any:
    return getattr(args, name, None)


def query_config(args: argparse.Namespace, index: Index) -> PipelineConfig:
    """The config `search` and `ask` run: ``--config`` else ``pipelines/default.toml``, flags on top.

    Without ``--config`` and ``--retriever``, an index built without embeddings is searched with BM25
    (the default pipeline's hybrid retrieval would need its vectors).
    """
    config = resolve_config(args, "default")
    if not index.settings.embedder and not args.config and not args.retriever:
        config = config.with_overrides(retrieve={"retriever": "bm25"})
    return config


# -- component specs on the command line ------------------------------------------------------------------
def component_spec(role: str) -> Any:
    """An argparse type: a spec whose name is a registered ``role`` component (checked at parse time)."""
    from ragline.components import component, spec_of

    def parse(text: str) -> str:
        try:
            component(role, spec_of(text)[0])
        except RaglineError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return text

    parse.__name__ = f"{role} spec"
    return parse


def component_help(role: str, lead: str) -> str:
    """``lead`` and the registered names of ``role``, so --help lists what is installed."""
    from ragline.components import names

    return f"{lead} (registered: {', '.join(names(role))})"
