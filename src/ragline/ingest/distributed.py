"""Ingestion on a Ray cluster: loading, chunking, contextualizing and embedding spread over Ray Data workers.

``load_on_ray(source, settings, address)`` does what ``ragline index`` does locally before it syncs: the
driver lists the files (or reads a ``.jsonl``/BEIR corpus), and a pool of Ray Data actors (``map_batches``)
loads each file, cuts it into chunks, contextualizes them and embeds them through the embedding cache
(``$RAGLINE_CACHE``, passed on to the workers), so a text already embedded is looked up, not recomputed.
What comes back is a ``LoadReport`` of the units to index (chunks, or whole documents with chunker
``none``), in the order a local load gives, and their vectors; the caller syncs them into any store.

A file that fails to load is reported by name in ``report.errors`` and kept (or, for bad metadata, not
kept) exactly as ``ragline.ingest.loaders.load_folder`` decides. Nothing is written by the workers: a run
killed midway leaves the store as the last commit left it, and the cache keeps what was embedded.

``address``: ``ray`` starts a local head (bounded object store) for the run and stops it after;
``ray://HOST:PORT`` connects to a cluster through Ray Client. Workers run the driver's ragline code
(shipped as a ``py_modules`` runtime environment); its dependencies must be installed on the cluster's
nodes, and a folder must be readable at the same path on every node.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, InputError, MetadataError, RaglineError
from ragline.index.store import IndexSettings
from ragline.ingest.files import DEFAULT_MAX_BYTES, document_id
from ragline.ingest.loaders import DOCUMENT_SUFFIXES, LoadReport, load_file, load_jsonl_corpus, plan_folder
from ragline.types import Document

OBJECT_STORE_BYTES = 500_000_000  # the local head's object store: ingestion streams, it needs little
BATCH_SIZE = 16  # files or documents a worker takes at a time


@dataclass
class DistributedLoad:
    """Units to index (``report.documents``) with their vectors (None without an embedder) and counts."""

    report: LoadReport
    vectors: np.ndarray | None
    workers: int
    computed: int = 0  # passages the workers embedded
    cached: int = 0  # passages found in the embedding cache
    seconds: dict[str, float] = field(default_factory=dict)


def parse_workers(spec: str) -> str:
    """The Ray address of a ``--workers`` value: ``ray`` (a local head) or ``ray://HOST:PORT``."""
    if spec == "ray" or (spec.startswith("ray://") and len(spec) > len("ray://")):
        return spec
    raise ConfigError(f"--workers {spec!r}: use ray (start a local Ray head) or ray://HOST:PORT (a Ray cluster)")


def _ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise ConfigError("--workers ray needs Ray: pip install 'ragline[scale]' (make setup)") from None
    return ray


@contextmanager
def ray_connection(address: str, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray, connected to ``address`` for the block (disconnected after; a local head is stopped).

    Already connected (e.g. a caller that holds a cluster for several runs): that connection is used
    and left open.
    """
    ray = _ray()
    if ray.is_initialized():
        yield ray
        return
    import ragline

    env_vars = {name: os.environ[name] for name in ("RAGLINE_CACHE", "OMP_WAIT_POLICY") if name in os.environ}
    runtime_env = {"py_modules": [str(Path(ragline.__file__).parent)], "env_vars": env_vars}
    try:
        if address == "ray":
            ray.init(
                address="local",
                num_cpus=num_cpus or os.cpu_count(),
                object_store_memory=OBJECT_STORE_BYTES,
                include_dashboard=False,
                log_to_driver=False,
                runtime_env=runtime_env,
                logging_level=logging.WARNING,
            )
        else:
            ray.init(
                address=parse_workers(address),
                log_to_driver=False,
                runtime_env=runtime_env,
                logging_level=logging.WARNING,
            )
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise RaglineError(f"cannot start or reach Ray at {address}: {error}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


class IngestWorker:
    """One Ray Data actor: loads, chunks, contextualizes and embeds a batch (the models load once per actor)."""

    def __init__(self, chunker: str, context: str, embedder: str | None, max_bytes: int) -> None:
        from ragline.ingest.chunkers import build_chunker
        from ragline.ingest.context import build_contextualizer

        self.chunker_spec, self.max_bytes = chunker, max_bytes
        self.chunker = build_chunker(chunker) if chunker != "none" else None
        self.contextualizer = build_contextualizer(context, None)
        self.embedder = None
        if embedder:
            from ragline.models import CachedEmbedder, load_embedder

            self.embedder = CachedEmbedder(load_embedder(embedder))

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        from ragline.index.segment import FIELD_TEXT
        from ragline.ingest.pipeline import _whole

        out: dict[str, list[Any]] = {"seq": [], "kind": [], "payload": [], "vector": []}

        def emit(seq: int, kind: str, payload: Any, vector: bytes = b"") -> None:
            out["seq"].append(seq)
            out["kind"].append(kind)
            out["payload"].append(pickle.dumps(payload))
            out["vector"].append(vector)

        units: list[tuple[int, Document]] = []
        for seq, path, relative, blob in zip(batch["seq"], batch["path"], batch["relative"], batch["document"]):
            if path:
                try:
                    document = load_file(Path(path), Path(relative), self.max_bytes)
                except MetadataError as error:
                    emit(int(seq), "metadata-error", (error.source, error.reason, document_id(Path(relative))))
                    continue
                except InputError as error:
                    emit(int(seq), "error", (error.source, error.reason, document_id(Path(relative))))
                    continue
            else:
                document = pickle.loads(blob)
            pieces = [_whole(document)] if self.chunker is None else self.chunker.chunk(document)
            pieces, _ = self.contextualizer.contextualize(document, pieces)
            units.extend((int(seq), piece) for piece in pieces)
        vectors: Any = [b""] * len(units)
        if self.embedder is not None and units:
            before = (self.embedder.computed, self.embedder.cached)
            embedded = self.embedder.embed_passages([FIELD_TEXT["body"](u) for _, u in units], progress=False)
            vectors = [np.asarray(v, "<f4").tobytes() for v in embedded]
            emit(-1, "counts", (self.embedder.computed - before[0], self.embedder.cached - before[1]))
        for (seq, unit), vector in zip(units, vectors):
            emit(seq, "unit", unit, vector)
        return out


def load_on_ray(
    source: str | Path,
    settings: IndexSettings,
    address: str = "ray",
    workers: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_links: bool = False,
    batch_size: int = BATCH_SIZE,
) -> DistributedLoad:
    """Load, chunk, contextualize and embed ``source`` on Ray with ``workers`` actors (default: the cluster's CPUs).

    ``settings`` give the chunker, the context and the embedder (none: no vectors). The units come back
    in local load order (file by file, chunk by chunk), so a sync of them equals a local ``ragline index``.
    """
    import time

    if settings.context == "late":
        raise ConfigError("--context late needs the whole document's token vectors; use breadcrumb or llm with Ray")
    source = Path(source)
    started = time.perf_counter()
    items, report = _items(source, follow_links)
    with ray_connection(address, workers) as ray:
        size = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        context.execution_options.preserve_order = True
        blocks = max(1, min(len(items), size * 4))
        dataset = ray.data.from_items(items, override_num_blocks=blocks) if items else None
        rows: list[dict[str, Any]] = []
        if dataset is not None:
            mapped = dataset.map_batches(
                IngestWorker,
                fn_constructor_kwargs={
                    "chunker": settings.chunker,
                    "context": settings.context,
                    "embedder": settings.embedder,
                    "max_bytes": max_bytes,
                },
                batch_size=batch_size,
                compute=ray.data.ActorPoolStrategy(size=size),
                num_cpus=1,
            )
            try:
                rows = mapped.take_all()
            except Exception as error:  # a worker's failure arrives wrapped in Ray's task error
                raise RaglineError(f"distributed ingestion of {source} failed on a Ray worker: {error}") from None
    return _collect(rows, report, size, settings, started)


def _items(source: Path, follow_links: bool) -> tuple[list[dict[str, Any]], LoadReport]:
    """What the workers take: files to load (folder, one file) or documents already read (a corpus)."""
    if source.is_file() and source.suffix == ".jsonl" or (source / "corpus.jsonl").is_file():
        report = load_jsonl_corpus(source if source.is_file() else source / "corpus.jsonl")
        documents, report.documents = report.documents, []
        items = [{"path": "", "relative": "", "document": pickle.dumps(d)} for d in documents]
    elif source.is_dir():
        files, report = plan_folder(source, DOCUMENT_SUFFIXES, follow_links)
        items = [{"path": str(p), "relative": r.as_posix(), "document": b""} for p, r in files]
    elif not source.exists():
        raise InputError(str(source), "no such file or directory")
    else:
        if source.suffix.lower() not in DOCUMENT_SUFFIXES:
            raise InputError(str(source), f"unsupported file type {source.suffix or '(none)'!r}")
        report = LoadReport()
        items = [{"path": str(source), "relative": source.name, "document": b""}]
        if source.is_symlink() and not follow_links:  # as load_path: a link named directly is not followed
            report.errors.append(InputError(str(source), f"is a link (to {source.resolve()}); use --follow-links"))
            items = []
    for seq, item in enumerate(items):
        item["seq"] = seq
    return items, report


def _collect(
    rows: list[dict[str, Any]], report: LoadReport, workers: int, settings: IndexSettings, started: float
) -> DistributedLoad:
    import time

    units: list[tuple[int, int, Document, bytes]] = []
    computed = cached = 0
    errors: list[tuple[int, InputError]] = []
    for position, row in enumerate(rows):
        kind, payload = row["kind"], pickle.loads(row["payload"])
        if kind == "unit":
            units.append((row["seq"], position, payload, row["vector"]))
        elif kind == "counts":
            computed, cached = computed + payload[0], cached + payload[1]
        elif kind == "metadata-error":
            errors.append((row["seq"], MetadataError(*payload[:2])))  # fail closed: not kept
            report.withdrawn.add(payload[2])
        else:
            where, reason, doc_id = payload
            errors.append((row["seq"], InputError(where, reason)))
            report.keep.ids.add(doc_id)
    units.sort(key=lambda u: (u[0], u[1]))
    report.errors.extend(error for _, error in sorted(errors, key=lambda e: e[0]))
    report.documents = [unit for _, _, unit, _ in units]
    vectors = None
    if settings.embedder and units:
        vectors = np.stack([np.frombuffer(v, "<f4") for _, _, _, v in units]).astype(np.float32)
    seconds = {"total": round(time.perf_counter() - started, 3)}
    return DistributedLoad(report, vectors, workers, computed, cached, seconds)
