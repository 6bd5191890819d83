"""``ragline index SOURCE``: load, chunk and sync a folder, a file or a corpus into an index."""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ragline.cli.common import (
    add_analysis_flags,
    add_common,
    add_config_flag,
    emit_json,
    index_path,
    report_embeddings,
)
from ragline.cli.settings import index_settings
from ragline.corpora.builtin import DEFAULT_INGEST
from ragline.errors import ConfigError, RaglineError
from ragline.freshness import VerifiedFiles, load_source, record_source, recorded_sources
from ragline.index import Index
from ragline.index.changes import check_deletions
from ragline.ingest import LoadReport
from ragline.ingest.loaders import DOCUMENT_SUFFIXES
from ragline.progress import stderr
from ragline.store import open_store, store_scheme
from ragline.store.uri import redacted_uri


def cmd_index(args: argparse.Namespace) -> int:
    path = index_path(args)
    check_source(Path(args.source), path, args.yes)
    settings = index_settings(args, path)
    started = time.perf_counter()
    workers = getattr(args, "workers", None)
    if workers and args.dry_run:
        raise RaglineError("--dry-run compares a local load with the index: leave out --workers")
    vectors, distributed = None, None
    if workers:
        from ragline.ingest.distributed import load_on_ray, parse_workers

        address = parse_workers(workers)
        with stderr.status(f"loading, chunking and embedding {args.source} on Ray ({address})"):
            distributed = load_on_ray(
                args.source, settings, address, args.ray_workers, int(args.max_file_mb * 1024 * 1024), args.follow_links
            )
        loaded, vectors = distributed.report, distributed.vectors
    else:
        with stderr.status(f"reading {args.source}"):
            loaded = load_source(Path(args.source), int(args.max_file_mb * 1024 * 1024), args.follow_links)
    for error in loaded.errors:
        stderr.print(Text.assemble(("skipped", "yellow"), f" {error}"), highlight=False)
    for warning in getattr(loaded, "warnings", []):
        stderr.print(Text.assemble(("warning", "yellow"), f" {warning}"), highlight=False)
    if loaded.unsupported:
        listed = ", ".join(f"{count} {suffix or '(no suffix)'}" for suffix, count in loaded.unsupported.items())
        stderr.print(Text.assemble(("not indexed", "yellow"), f" (unsupported file types): {listed}"), highlight=False)
    if settings.context == "late":
        raise RaglineError("--context late needs vectors per chunk at sync time; use breadcrumb or llm here")
    from ragline.text.scripts import cjk_embedder_warning

    warning = cjk_embedder_warning((d.text for d in loaded.documents), settings.embedder)
    if warning:
        stderr.print(Text(f"warning: {warning}", style="yellow"))
    if args.dry_run:
        return _dry_run(args, path, settings, loaded)
    units = loaded.documents
    if settings.chunker != "none" and distributed is None:  # Ray workers have chunked already
        from ragline.ingest.pipeline import IngestConfig, chunk_documents

        units, _ = chunk_documents(loaded.documents, IngestConfig(settings.chunker, settings.context))
        loaded.documents = []  # the chunks hold the text now: let the whole documents go (peak memory)
    store = getattr(args, "store", None)
    if store and store_scheme(store) == "file":
        raise ConfigError(f"--store {store!r}: a store server's URI (milvus://, postgresql://); a folder is --index")
    if store:
        path = redacted_uri(store)  # reported without the password
        if args.vector_index is None:  # a store stamps vectors with FLAT (exact) search unless given
            settings = dataclasses.replace(settings, vector_index="flat")
    opened = open_store(store, settings) if store else Index.open_or_create(path, settings)
    if distributed is not None and not store:
        from ragline.store.embedded import EmbeddedCollection

        opened = EmbeddedCollection(opened)  # its sync takes the vectors computed on Ray
    with opened as index:
        # A file that fails to load keeps what an earlier run indexed (nothing indexed is lost), except where
        # failing closed is safer (bad metadata, links out of the folder): loaded.keep says which ids stay.
        # One document file adds or updates that document; a folder or corpus is mirrored (prune).
        one_file = Path(args.source).is_file() and Path(args.source).suffix != ".jsonl"
        if distributed is not None:
            report = index.sync(units, prune=not one_file, keep=loaded.keep, vectors=vectors)
        else:
            report = index.sync(units, prune=not one_file, keep=loaded.keep)
        if not args.allow_mass_delete:  # before the commit: raising drops what the sync staged
            check_deletions(
                report,
                Path(args.source),
                path,
                [] if store else recorded_sources(path),
                getattr(loaded, "withdrawn", set()),
            )
        unit = "documents" if settings.chunker == "none" else "chunks"
        with stderr.status(f"committing {report.added + report.updated} {unit}"):
            index.commit()
        report_embeddings(index)
        built = _sync_structures(index, args.structure or [], store)
        info = index.info()
        generation = getattr(index, "generation", None)
    if not store:
        record_source(path, args.source)  # for `ragline status` and the stale-source check of `ragline ask`
        # Each file loaded is what this commit holds: the stale-source check need not re-read it.
        if generation is not None:
            verified = VerifiedFiles(path, generation)
            for file, signature in getattr(loaded, "signatures", {}).items():
                verified.remember(file, signature)
            verified.save()
    result = {
        "index": str(path),
        "added": report.added,
        "updated": report.updated,
        "deleted": report.deleted,
        "unchanged": report.unchanged,
        "skipped": len(loaded.errors),
        "warnings": [str(w) for w in getattr(loaded, "warnings", [])],
        "unsupported": loaded.unsupported,
        "unit": unit,
        # "documents" counts the indexed units (kept for scripts written before chunking was the default)
        "documents": info["documents"],
        "chunks": info["documents"] if unit == "chunks" else None,
        "chunker": settings.chunker,
        "context": settings.context,
        "generation": info["generation"],
        "seconds": round(time.perf_counter() - started, 3),
    }
    if built:
        result["structures"] = built
    if distributed is not None:
        result["ray"] = {
            "address": workers,
            "workers": distributed.workers,
            "embedded": distributed.computed,
            "embeddings_cached": distributed.cached,
        }
        stderr.print(
            f"Ray: {distributed.workers} workers; {distributed.computed} passages embedded, "
            f"{distributed.cached} from the cache"
        )
    if args.output == "json":
        emit_json(result)
    else:
        chunking = "" if unit == "documents" else f", {settings.chunker} + {settings.context}"
        Console().print(
            Text(
                f"{path}: {report.added} added, {report.updated} updated, {report.deleted} deleted, "
                f"{report.unchanged} unchanged, {len(loaded.errors)} skipped, "
                f"{sum(loaded.unsupported.values())} unsupported; {info['documents']} {unit} "
                f"(generation {info['generation']}{chunking}, {result['seconds']} s)"
            )
        )
    return 0


def _sync_structures(index: Any, specs: list[str], store: str | None) -> list[dict[str, Any]]:
    """Build or bring up to date each ``--structure`` beside the index; what each cost."""
    if not specs:
        return []
    if store:
        raise ConfigError("--structure stores a structure beside an index folder; a --store collection has none")
    from ragline.specs import parse_spec
    from ragline.structures.base import build_structure

    out = []
    for spec in specs:
        name, params = parse_spec(spec, "--structure")
        with stderr.status(f"building structure {name}"):
            manifest = build_structure(index, name, params)
        out.append(
            {
                "structure": name,
                "nodes": manifest.get("nodes"),
                "cost": manifest["cost"],
                "updated": manifest.get("updated"),
            }
        )
        size = f"{manifest.get('nodes')} nodes"
        if "relations" in manifest:  # the entity graph: its nodes are entities
            size = f"{manifest['nodes']} entities, {manifest['relations']} relations"
        stderr.print(f"structure {name}: {size}, {manifest['cost']['seconds']} s")
    return out


def check_source(source: Path, index: Path, yes: bool) -> None:
    """Refuse a source that is the filesystem root (without ``--yes``), or the index folder or inside it."""
    resolved = source.resolve()
    if resolved == Path(resolved.anchor) and not yes:
        raise ConfigError(
            f"{source} is the root of the filesystem: name the folder of your documents, "
            "or add --yes to index everything under it"
        )
    if resolved.is_relative_to(index.resolve()):
        raise ConfigError(
            f"{source} is the index {index} itself (or inside it): an index cannot index itself; "
            "name the folder of your documents"
        )


def _dry_run(args: argparse.Namespace, path: Path, settings: Any, loaded: LoadReport) -> int:
    """What the sync would add, update and delete, by document; nothing is written (an LLM context is not run)."""
    from ragline.freshness import chunk_like_index, compare_documents

    one_file = Path(args.source).is_file() and Path(args.source).suffix != ".jsonl"
    index = Index.open(path) if (path / "manifest.json").is_file() else Index.create(None, settings)
    units = chunk_like_index(index, loaded.documents)
    report = compare_documents(
        index, units, prune=not one_file, keep=loaded.keep, text_only=index.settings.context in ("llm", "late")
    )
    if args.output == "json":
        emit_json(
            {
                "index": str(path),
                "dry_run": True,
                "added": report.added,
                "updated": report.updated,
                "deleted": report.deleted,
                "unchanged": report.unchanged,
                "skipped": len(loaded.errors),
                "changes": [d.to_dict() for d in report.documents],
            }
        )
        return 0
    console = Console()
    for d in report.documents:
        console.print(Text(f"{d.status:10} {d.doc_id}" + (f" ({d.source})" if d.source else "")))
    console.print(
        Text(
            f"dry run, nothing written to {path}: {report.added} chunks would be added, {report.updated} "
            f"updated, {report.deleted} deleted, {report.unchanged} unchanged"
        )
    )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "index",
        help="index or re-sync a folder of documents (" + " ".join(DOCUMENT_SUFFIXES) + "), one file, or a BEIR corpus",
        description="Index SOURCE. Run again on the same source to sync: new and changed files "
        "are (re)indexed, removed files deleted, unchanged files skipped. A folder, BEIR folder or .jsonl "
        "corpus is mirrored: a sync that would delete more than half of the index's documents (or all), "
        "or delete documents of another folder than the one the index was built from, stops and writes "
        "nothing unless --allow-mass-delete. One document file is added or updated and never deletes. "
        "A link named as SOURCE is followed only with --follow-links.",
    )
    p.add_argument(
        "source",
        help="a folder of documents (" + ", ".join(DOCUMENT_SUFFIXES) + "), one such file, "
        "a BEIR folder (corpus.jsonl) or a .jsonl corpus",
    )
    p.add_argument("--max-file-mb", type=float, default=20.0, help="skip (and report) files larger than this (20)")
    p.add_argument(
        "--follow-links",
        action="store_true",
        help="follow symbolic links that point outside the folder, and a link named as SOURCE "
        "(default: report and skip them)",
    )
    p.add_argument(
        "--chunker",
        metavar="SPEC",
        help=f"cut documents into chunks: {DEFAULT_INGEST.chunker} (the measured best: the default, for a new "
        "index), fixed:size=100,overlap=30, structure:max_words=200, sentences:window=3, recursive:size=120; "
        "none = whole documents",
    )
    p.add_argument(
        "--context",
        choices=("none", "breadcrumb", "llm"),
        help="chunk context: none (the default), breadcrumb = [Title > Section] prefix; llm = a sentence "
        "by the local LLM",
    )
    p.add_argument(
        "--default-acl",
        metavar="GROUPS",
        help="ACL groups (comma-separated, e.g. all) given to documents that have no acl of their own",
    )
    p.add_argument(
        "--store",
        metavar="URI",
        help="index into a collection on a store instead of the --index folder: "
        "milvus://[user:password@]HOST:PORT/NAME (milvus+tls:// for TLS) or "
        "postgresql://[user[:password]@]HOST[:PORT]/DATABASE/COLLECTION; synced by content hash like a folder "
        "(see docs/scale.md)",
    )
    p.add_argument(
        "--allow-mass-delete",
        action="store_true",
        help="let the sync delete more than half of the index's documents, or those of another folder than "
        "the one the index was built from (default: stop and write nothing)",
    )
    p.add_argument("--yes", action="store_true", help="index the filesystem root when it is named as SOURCE")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="say which documents would be added, updated and deleted, and write nothing",
    )
    p.add_argument(
        "--workers",
        metavar="RAY",
        help="spread loading, chunking, context and embedding over Ray: ray (start a local head for the run) "
        "or ray://HOST:PORT (a cluster, through Ray Client); writes to the --index folder or --store as usual",
    )
    p.add_argument(
        "--ray-workers",
        type=int,
        metavar="N",
        help="with --workers: how many Ray workers (one CPU each; default: the cluster's CPUs)",
    )
    p.add_argument(
        "--structure",
        action="append",
        metavar="NAME[:key=value,...]",
        help="after the sync, build or bring up to date a derived structure stored beside the index "
        "(repeatable): raptor (a tree of cluster summaries; raptor:summarizer=llm,reduce=umap); "
        "`ragline status` says when one is stale",
    )
    add_analysis_flags(p, stamped=True)
    add_config_flag(
        p, "sentence-packed chunks, MiniLM embeddings (the [ingest] and [index] stages of pipelines/default.toml)"
    )
    add_common(p)
    p.set_defaults(func=cmd_index)
