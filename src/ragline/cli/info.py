"""``ragline info``: documents, segments, settings and build stamps of an index."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline.cli.common import (
    add_common,
    emit_json,
    index_path,
)
from ragline.cli.settings import describe_setting
from ragline.index import Index


def cmd_info(args: argparse.Namespace) -> int:
    info = Index.open(index_path(args)).info()
    if args.output == "json":
        emit_json(info)
        return 0
    table = Table(title=Text(f"ragline index {info['path']}"), show_header=False)
    for key in (
        "documents",
        "deleted",
        "size_bytes",
        "generation",
        "format",
        "ragline_version",
        "created_at",
        "committed_at",
    ):
        table.add_row(key, str(info[key]))
    segments = ", ".join(f"{s['name']} ({s['rows']} rows, {s['deleted']} deleted)" for s in info["segments"])
    table.add_row("segments", Text(segments))
    settings = info["settings"]
    chunker = settings.get("chunker", "none")
    table.add_row("unit", "documents" if chunker == "none" else "chunks")
    table.add_row("chunker", Text(chunker))
    table.add_row("context", Text(settings.get("context", "none")))
    table.add_row("embedder", Text(settings.get("embedder") or "none (BM25 only)"))
    table.add_row("vector index", Text(settings.get("vector_index", "hnsw") if settings.get("embedder") else "none"))
    if "default_acl" in settings:
        table.add_row("default acl", Text(describe_setting("default_acl", settings["default_acl"])))
    table.add_row("analyzer", Text(json.dumps(settings["analyzer"])))
    table.add_row("fields", Text(json.dumps(settings["fields"])))
    table.add_row("bm25", Text(json.dumps(settings["bm25"])))
    Console().print(table)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("info", help="documents, segments, deletes, size and build stamps of an index")
    add_common(p)
    p.set_defaults(func=cmd_info)
