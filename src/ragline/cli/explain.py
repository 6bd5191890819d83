"""``ragline explain QUERY DOC_ID``: why a document ranked where it did (BM25 terms, cosine, fusers)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline import __version__
from ragline.cli.common import (
    add_bm25_flags,
    add_common,
    add_principal_flags,
    add_store_flag,
    bm25_params,
    emit_json,
    index_path,
    opened_store,
    positive_int,
    principal_of,
)
from ragline.errors import ConfigError
from ragline.index import Index


def _number(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def cmd_explain(args: argparse.Namespace) -> int:
    from ragline.explain import explain

    store = opened_store(args)
    if store is not None and not isinstance(store[0], Index):
        # ragline's per-term BM25 sums and the fusers' views are the embedded index's; another store scores
        # with its own analyzer and statistics, which it does not expose term by term
        raise ConfigError(
            f"explain reads the embedded index's BM25 terms and vectors; {store[1]} scores by itself: "
            "explain on an embedded index built from the same folder (--index or --store PATH)"
        )
    path = index_path(args) if store is None else store[1]
    index = Index.open(path) if store is None else store[0]
    params = bm25_params(args, index.settings.bm25)
    # The principal's ACL decides which ids may be explained at all, not only the ranks (fail closed).
    out = explain(
        index, args.query, args.doc_id, params, depth=args.depth, filter=args.filter, principal=principal_of(args)
    )
    flt_text = out["filter"]
    if args.output == "json":
        emit_json(
            {**out, "provenance": {"ragline_version": __version__, "index": str(path), "generation": index.generation}}
        )
        return 0
    lexical = out["bm25"]
    console = Console()
    params = lexical["params"]
    console.print(Text(f"BM25 {params['variant']} (k1={params['k1']:g}, b={params['b']:g}): {lexical['formula']}"))
    if lexical["statistics"] == "collection-wide":
        console.print(
            Text(
                f"N = {lexical['n_docs']} documents; "
                + "; ".join(
                    f"{f['field']} x{f['weight']:g}: dl {f['doc_len']:g}, avgdl {f['avg_len']:.1f}, "
                    f"1 - b + b dl/avgdl = {f['length_norm']:.3f}"
                    for f in lexical["fields"]
                )
            )
        )
    else:
        console.print(Text(f"collection statistics (N, df, idf, avgdl) {lexical['statistics']}"))
    table = Table(title=Text(f"{out['doc_id']} for {out['query']!r}"))
    for column in ("term", "field", "tf", "df", "idf", "tf weight", "contribution"):
        table.add_column(column, justify="left" if column in ("term", "field") else "right")
    for c in lexical["contributions"]:
        table.add_row(
            Text(c["term"]),
            c["field"],
            f"{c['tf']:g}",
            "—" if c["df"] is None else str(c["df"]),
            _number(c["idf"]),
            _number(c["tf_weight"]),
            _number(c["contribution"]),
        )
    console.print(table)
    rank = lexical["rank"] or f"not in the top {out['depth']}" + (" under the filter" if flt_text else "")
    exact = "" if lexical["exact_score"] is None else f" (float64 sum {lexical['exact_score']:.6f})"
    console.print(f"BM25 score {lexical['score']:.6f}{exact}, rank {rank}")
    if lexical["unknown_terms"]:
        console.print(Text(f"terms in no document: {', '.join(lexical['unknown_terms'])}"))
    if out["dense"] is None:
        console.print("no dense part: the index has no embeddings")
        return 0
    console.print(f"dense cosine {out['dense']['cosine']:.4f}, rank {out['dense']['rank'] or '—'}")
    fusion = Table(title="fusers: the document's normalized score per run (— = not retrieved)")
    for column in ("fuser", "bm25", "dense", "fused", "rank"):
        fusion.add_column(column, justify="left" if column == "fuser" else "right")
    for name, part in out["fusion"].items():
        norm = part["normalized"] or {"bm25": None, "dense": None}
        fusion.add_row(
            name, _number(norm["bm25"]), _number(norm["dense"]), _number(part["fused_score"]), str(part["rank"] or "—")
        )
    console.print(fusion)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("explain", help="why a document ranked where it did: BM25 per term, cosine, fusers")
    p.add_argument("query")
    p.add_argument("doc_id", metavar="DOC_ID", help="a live id of the index (a chunk id <document>#<n> when chunked)")
    p.add_argument("--depth", type=positive_int, default=100, help="candidates per retriever for ranks (100)")
    p.add_argument("--filter", help='ranks among the documents this metadata filter admits, e.g. "acl in [all]"')
    add_principal_flags(p, "rank")
    add_store_flag(p, "explain on (the embedded index: a folder or file://)")
    add_bm25_flags(p)
    add_common(p)
    p.set_defaults(func=cmd_explain)
