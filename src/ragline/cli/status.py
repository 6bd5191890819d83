"""``ragline status [FOLDER]``: documents changed on disk since indexing, and pipeline drift against the index."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline.cli.common import add_common, add_config_flag, add_store_flag, emit_json, index_path, opened_store
from ragline.errors import InputError
from ragline.freshness import FreshnessReport, folder_status, pipeline_drift, recorded_sources, weights_drift
from ragline.index import Index


def cmd_status(args: argparse.Namespace) -> int:
    store = opened_store(args)
    if store is not None and not isinstance(store[0], Index):
        return _store_status(args, store[0])
    path = index_path(args) if store is None else store[1]
    index = Index.open(path)
    sources = [args.folder] if args.folder else recorded_sources(path)
    if not sources:
        raise InputError(
            str(path),
            "no FOLDER given and the index records none (it was not built by `ragline "
            "index`, or before it recorded its source): give the folder it was indexed from",
        )
    config = None
    if args.config:
        from ragline.config import load_config

        config = load_config(args.config)
    reports = [(str(s), folder_status(index, s, None, int(args.max_file_mb * 1024 * 1024))) for s in sources]
    drift = pipeline_drift(index, config) if config is not None else [d for d in [weights_drift(index)] if d]
    merged = _merge([r for _, r in reports], len(sources) > 1)
    merged.drift = drift
    from ragline.structures.base import structure_status

    structures = structure_status(index)
    stale_structures = [s for s in structures if s["stale"]]
    if args.output == "json":
        emit_json(
            {
                "index": str(path),
                "sources": [s for s, _ in reports],
                "generation": index.generation,
                **merged.to_dict(),
                "structures": structures,
            }
        )
        return 1 if args.exit_code and (merged.stale or stale_structures) else 0
    console = Console()
    for s in structures:
        state = (
            (
                f"stale ({s['added']} chunks added, {s['changed']} changed, {s['removed']} removed since it was "
                f"built): rebuild with `ragline index ... --structure {s['structure']}`"
            )
            if s["stale"]
            else "fresh"
        )
        console.print(
            Text(f"structure {s['structure']} (built {s['built_at']}): {state}", style="yellow" if s["stale"] else "")
        )
    if not merged.documents and not drift:
        console.print(
            Text(
                f"{path} is up to date with {', '.join(s for s, _ in reports)} "
                f"(generation {index.generation}, {merged.unchanged} chunks checked)"
            )
        )
        return 1 if args.exit_code and stale_structures else 0
    if merged.documents:
        table = Table(title=Text(f"{path} against {', '.join(s for s, _ in reports)}"))
        for column in ("status", "document", "source", "chunks"):
            table.add_column(column, overflow="fold")
        for d in merged.documents:
            table.add_row(d.status, Text(d.doc_id), Text(d.source or ""), str(d.chunks))
        console.print(table)
        console.print(
            Text(
                f"re-sync with `ragline index {reports[0][0]}`: {merged.added} chunks to add, "
                f"{merged.updated} to update, {merged.deleted} to delete"
            )
        )
    for d in drift:
        console.print(
            Text(f"drift: {d.setting} indexed {d.indexed!r}, configured {d.configured!r}: {d.redo}", style="yellow")
        )
    return 1 if args.exit_code else 0


def _store_status(args: argparse.Namespace, collection: Any) -> int:
    """A store other than the embedded index: its documents, generation and stamps (it records no source
    files, so there is nothing on disk to compare with)."""
    if args.folder:
        raise InputError(
            str(args.folder),
            "comparing a folder works on the embedded index; for this store "
            "re-run `ragline index FOLDER --store URI`, which syncs by content hash",
        )
    info = collection.info()
    if args.output == "json":
        emit_json(
            {
                "index": info["store"],
                "sources": [],
                "generation": info["generation"],
                "documents": info["documents"],
                "settings": info["settings"],
                "embedder": info.get("embedder"),
            }
        )
        return 0
    Console().print(Text(f"{info['store']}: {info['documents']} chunks, generation {info['generation']}"))
    return 0


def _merge(reports: list[FreshnessReport], several: bool) -> FreshnessReport:
    """One report for several sources (files synced one by one): a chunk removed is one no source gives."""
    if not several:
        return reports[0]
    out = FreshnessReport()
    for r in reports:
        out.added += r.added
        out.updated += r.updated
        out.unchanged += r.unchanged
        out.documents += [d for d in r.documents if d.status != "removed"]
    return out


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "status",
        help="documents changed, added or removed on disk since indexing, and pipeline drift",
        description="Compare the index with FOLDER (default: the source `ragline index` recorded) as a sync would, "
        "writing nothing; with --config, also compare the pipeline's analyzer, chunker, context and embedder with "
        "the index's stamps. The embedder's weights are always checked against the stamped sha256.",
    )
    p.add_argument("folder", nargs="?", type=Path, help="the folder (or file, or corpus) the index was built from")
    p.add_argument("--max-file-mb", type=float, default=20.0, help="as for `ragline index` (20)")
    p.add_argument("--exit-code", action="store_true", help="exit 1 when the index is stale (for scripts and CI)")
    add_config_flag(p, "no pipeline drift check (only the embedder's weights)")
    add_store_flag(p, "report on")
    add_common(p)
    p.set_defaults(func=cmd_status)
