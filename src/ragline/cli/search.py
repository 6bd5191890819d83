"""``ragline search QUERY``: ranked hits with scores and snippets around the match."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline.anchors import anchor_of
from ragline.answer.version_policy import POLICIES, VersionPolicy, versions_policy
from ragline.cli.common import (
    add_bm25_flags,
    add_common,
    add_config_flag,
    add_principal_flags,
    add_store_flag,
    component_spec,
    emit_json,
    index_path,
    opened_store,
    positive_int,
    query_config,
    restricted_filter,
    snippet,
)
from ragline.cli.plain_table import plain_table
from ragline.freshness import stale_sources
from ragline.index import BM25Params, Index
from ragline.index.filters import restrict
from ragline.progress import stderr
from ragline.provenance import provenance as make_provenance


def cmd_search(args: argparse.Namespace) -> int:
    from ragline.retrieve.base import empty_query_reason
    from ragline.retrieve.registry import build_retriever

    store = opened_store(args)
    index, path = store if store is not None else (Index.open(index_path(args)), str(index_path(args)))
    config = query_config(args, index)
    bm25 = BM25Params(**{**index.settings.bm25.to_dict(), **config.index.bm25})
    retriever = build_retriever(config.retrieve.retriever, index, bm25)
    flt, flt_text = restricted_filter(args)
    if args.versions:
        config = config.with_overrides(retrieve={"versions": versions_policy(args.versions)})
    policy = VersionPolicy.parse(config.retrieve.versions)
    flt = restrict(flt, policy.restriction(index))  # inside retrieval, like the principal's restriction
    analyzer = index.settings.analyzer
    empty = empty_query_reason(args.query, analyzer)
    hits = [] if empty else retriever.search(args.query, args.k, flt)
    terms = set(analyzer(args.query))
    words: dict[str, list[str]] = {}  # the terms of each word of the snippets (they repeat across hits)
    # off: the config skips it; a store other than the embedded index records no source files to compare
    stale = stale_sources(index, hits) if config.retrieve.freshness != "off" and isinstance(index, Index) else []
    if args.output == "json":
        emit_json(
            {
                "query": args.query,
                "hits": [
                    {
                        "rank": h.rank,
                        "doc_id": h.document_id,
                        "chunk_id": h.doc_id,
                        "score": h.score,
                        "title": h.title,
                        "snippet": snippet(h.text, terms, analyzer, analyzed=words),
                        **anchor_of(h.metadata),
                    }
                    for h in hits
                ],
                **({"reason": empty} if empty else {}),
                "stale_sources": [x.to_dict() for x in stale],
                "provenance": make_provenance(
                    config,
                    index=path,
                    retriever=retriever.config(),
                    filter=flt_text,
                    versions=str(policy),
                    generation=index.generation,
                ),
            }
        )
        return 0
    if empty:
        stderr.print(Text(f"no results: {empty}", style="yellow"))
    title = f"{len(hits)} results for {args.query!r}" + (f" where {flt_text}" if flt_text else "")
    rows = [
        (str(h.rank), f"{h.score:.3f}", h.doc_id, h.title, snippet(h.text, terms, analyzer, analyzed=words))
        for h in hits
    ]
    print_hits(Console(), title, rows)
    for x in stale:
        stderr.print(
            Text(
                f"warning: {x.doc_id} {x.status} on disk since it was indexed ({x.source}): re-run `ragline index`",
                style="yellow",
            )
        )
    return 0


HEADERS = ("#", "score", "id", "title / snippet")


def print_hits(console: Console, title: str, rows: list[tuple[str, str, str, str, str]]) -> None:
    """The results table: (rank, score, id, title, snippet) per row, the title in bold above its snippet.

    Without styles to print (a pipe, a file), as plain text equal to rich's table (``plain_table``: rich's
    layout of it is most of a short search's time after its imports); else rich's table.
    """
    cells = [(rank, score, doc_id, f"{name}\n{text}" if name else text) for rank, score, doc_id, name, text in rows]
    plain = plain_table(console, title, HEADERS, cells)
    if plain is not None:
        console.file.write(plain)
        console.file.flush()  # as rich does: warnings on stderr follow the table in a shared file (2>&1)
        return
    table = Table(title=Text(title))
    for column in HEADERS:
        table.add_column(column, overflow="fold")
    for rank, score, doc_id, hit_title, text in rows:
        cell = Text.assemble((hit_title, "bold"), "\n" if hit_title else "", text)
        table.add_row(rank, score, Text(doc_id), cell)
    console.print(table)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("search", help="ranked results with scores and snippets")
    p.add_argument("query")
    p.add_argument("-k", type=positive_int, default=10, help="number of results (10)")
    p.add_argument("--filter", help='metadata filter, e.g. "acl in [all, hr] and year >= 2024"')
    p.add_argument(
        "--versions",
        metavar="POLICY",
        help=f"which document versions to return: {' | '.join(POLICIES)} (default: the config's, current)",
    )
    add_principal_flags(p, "search")
    add_store_flag(p, "search")
    p.add_argument(
        "--retriever",
        metavar="SPEC",
        type=component_spec("retriever"),
        help="any registered retriever spec (`ragline eval --help` lists them): bm25, dense, "
        "hybrid[:fuser=...,depth=...], ... (default: the config's, hybrid; bm25 on an index without embeddings)",
    )
    add_bm25_flags(p)
    add_config_flag(p, "pipelines/default.toml (hybrid, or bm25 on an index without embeddings)")
    add_common(p)
    p.set_defaults(func=cmd_search)
