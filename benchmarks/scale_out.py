"""Scale-out: the embedded index against a Milvus server, and ingestion on Ray against local ingestion.

Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/scale_out.py                   # Cranfield + SciFact, Ray on 300 docs
    PYTHONPATH=src .venv/bin/python benchmarks/scale_out.py --datasets cranfield --ray-docs 200 --skip kill

Output: one JSON object on stdout, also written to ``benchmarks/results/scale_out.json``; progress on stderr.

- ``stores``: per dataset (whole documents, no chunking, MiniLM, exact FLAT search on both stores):
  nDCG@10 of bm25 / dense / hybrid on the embedded index and on Milvus (``milvus-hybrid`` with the server's
  RRF and with ragline's RRF over two Milvus searches; the embedded ``hybrid`` is z-score fusion), the share
  of queries whose dense top 10 is the same id list on both stores (``dense_same_top10``; with ties allowed,
  ``dense_same_top10_ties``: equal score lists within 1e-5 and the same ids above the last tied score), and
  the mean overlap of the two BM25 top 10s (Milvus's tokenizer and IDF against ragline's).
- ``ray``: the first ``--ray-docs`` documents of SciFact as a corpus, default chunking (fixed 100 words,
  breadcrumbs), each run with a fresh embedding cache so every passage is embedded: local ingestion (one
  process) and Ray with 1 and 2 workers (``docs_per_s`` includes starting the head); chunks equal by hash
  and the least cosine against local vectors.
- ``kill``: ``ragline index CORPUS --store milvus://... --workers ray`` killed (SIGKILL, its process group)
  after ``--kill-after`` seconds, then run again to completion: the collection's ids and hashes against a
  local ingestion's, and ``count(*)`` against the number of distinct ids (no duplicates).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from common import bench_root

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "scale_out.json"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def start_milvus(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    binary = shutil.which("milvus-lite") or str(Path(sys.executable).parent / "milvus-lite")
    out = open(folder / "milvus.log", "wb")  # noqa: SIM115 (the server's log, open while it runs)
    process = subprocess.Popen([binary, "server", "--data-dir", str(folder / "db"), "--host", "127.0.0.1",
                                "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + 120
    while b"listening" not in (folder / "milvus.log").read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(f"milvus-lite did not start: {(folder / 'milvus.log').read_text(errors='replace')}")
        time.sleep(0.2)
    return process, f"127.0.0.1:{port}"


def compare_stores(name: str, server: str) -> dict[str, Any]:
    from ragline.components import build
    from ragline.config import load_config
    from ragline.eval.datasets import load_dataset
    from ragline.eval.retrieval import evaluate_retriever
    from ragline.ingest.pipeline import IngestConfig, build_index
    from ragline.store import open_store
    from ragline.store.embedded import EmbeddedCollection
    from ragline.store.evaluate import evaluate_on_store

    bench = bench_root()
    dataset = load_dataset(bench / name)
    config = load_config("default")
    config = dataclasses.replace(config, ingest=dataclasses.replace(config.ingest, chunker="none", context="none"))
    settings = dataclasses.replace(config.index.settings(config.ingest, embed=True), vector_index="flat")
    log(f"{name}: embedded index of {len(dataset.corpus)} documents")
    index = build_index(dataset.corpus, IngestConfig("none", "none"), settings)
    embedded = EmbeddedCollection(index)
    ndcg: dict[str, dict[str, float]] = {"embedded": {}, "milvus": {}}
    for retriever in ("bm25", "dense", "hybrid"):
        result = evaluate_retriever(dataset, build("retriever", {"name": retriever}, index=index), ("ndcg@10",), 100)
        ndcg["embedded"][retriever] = round(result.metrics["ndcg@10"], 4)
    uri = f"milvus://{server}/{name}_{int(time.time())}"
    for label, spec in (("bm25", "bm25"), ("dense", "dense"), ("hybrid", "hybrid:fusion=server"),
                        ("hybrid_ragline_rrf", "hybrid:fusion=rrf")):  # fmt: skip
        run_config = dataclasses.replace(config, retrieve=dataclasses.replace(config.retrieve, retriever=spec))
        log(f"{name}: milvus {label}")
        # A collection without vectors serves BM25 alone: its stamps differ from the dense one's.
        where = uri + ("_sparse" if label == "bm25" else "_dense")
        result = evaluate_on_store(dataset, run_config, where, metrics=("ndcg@10",), depth=100)
        ndcg["milvus"][label] = round(result.metrics["ndcg@10"], 4)
    embedded_rrf = evaluate_retriever(dataset, _Ranked("embedded-rrf", embedded.search_hybrid), ("ndcg@10",), 100)
    ndcg["embedded"]["hybrid_ragline_rrf"] = round(embedded_rrf.metrics["ndcg@10"], 4)
    milvus = open_store(uri + "_dense", None, create=False)
    same = same_ties = 0
    overlap = []
    queries = dataset.judged_queries
    for text in queries.values():
        a, b = embedded.search_dense(text, 10), milvus.search_dense(text, 10)
        same += [i for i, _ in a] == [i for i, _ in b]
        same_ties += _same_with_ties(a, b)
        x, y = {i for i, _ in embedded.search_sparse(text, 10)}, {i for i, _ in milvus.search_sparse(text, 10)}
        overlap.append(len(x & y) / 10)
    milvus.close()
    n = len(queries)
    return {"documents": len(dataset.corpus), "queries": n, "ndcg@10": ndcg,
            "dense_same_top10": round(same / n, 4), "dense_same_top10_ties": round(same_ties / n, 4),
            "bm25_top10_overlap": round(float(np.mean(overlap)), 4)}  # fmt: skip


class _Ranked:
    """A retriever over a ranking function (for ragline's RRF on the embedded collection)."""

    def __init__(self, name: str, fn: Any) -> None:
        self.name, self.fn = name, fn

    def rank(self, query: str, k: int, filter: Any = None) -> list[tuple[str, float]]:
        return self.fn(query, k, filter)

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def _same_with_ties(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    if len(a) != len(b) or any(abs(x[1] - y[1]) > 1e-5 for x, y in zip(a, b)):
        return False
    if not a:
        return True
    last = a[-1][1]
    above = lambda run: {i for i, s in run if s > last + 1e-5}  # noqa: E731 (ids above the tied tail)
    return above(a) == above(b)


def ray_throughput(docs: int, workers_list: list[int], scratch: Path) -> dict[str, Any]:
    from ragline.eval.datasets import load_dataset
    from ragline.index.segment import FIELD_TEXT
    from ragline.index.store import IndexSettings
    from ragline.ingest.distributed import load_on_ray
    from ragline.ingest.pipeline import IngestConfig, chunk_documents
    from ragline.models import CachedEmbedder, EmbeddingCache, load_embedder

    bench = bench_root()
    corpus = load_dataset(bench / "scifact").corpus[:docs]
    source = scratch / "scifact_part.jsonl"
    with open(source, "w", encoding="utf-8") as out:
        for d in corpus:
            out.write(json.dumps({"_id": d.id, "title": d.title, "text": d.text}) + "\n")
    settings = IndexSettings(embedder="minilm", chunker="fixed:size=100,overlap=30", context="breadcrumb")
    started = time.perf_counter()
    chunks, _ = chunk_documents(corpus, IngestConfig(settings.chunker, settings.context))
    embedder = CachedEmbedder(load_embedder("minilm"), EmbeddingCache(scratch / "cache-local"))
    local_vectors = embedder.embed_passages([FIELD_TEXT["body"](c) for c in chunks], progress=False)
    local_s = time.perf_counter() - started
    local = {"seconds": round(local_s, 1), "docs_per_s": round(docs / local_s, 2)}
    result: dict[str, Any] = {"documents": docs, "chunks": len(chunks), "local": local}
    for workers in workers_list:
        os.environ["RAGLINE_CACHE"] = str(scratch / f"cache-ray{workers}")
        started = time.perf_counter()
        loaded = load_on_ray(source, settings, "ray", workers=workers)
        seconds = time.perf_counter() - started
        same = [d.hash for d in loaded.report.documents] == [c.hash for c in chunks]
        v = loaded.vectors
        cos = np.sum(v * local_vectors, 1) / np.linalg.norm(v, axis=1) / np.linalg.norm(local_vectors, axis=1)
        result[f"ray_{workers}"] = {"seconds": round(seconds, 1), "docs_per_s": round(docs / seconds, 2),
                                    "same_chunks": same, "min_cosine": float(cos.min()),
                                    "embedded": loaded.computed}  # fmt: skip
        log(f"ray {workers}: {result[f'ray_{workers}']}")
    return result


def kill_and_rerun(server: str, scratch: Path, kill_after: list[float]) -> list[dict[str, Any]]:
    from ragline.store import open_store

    source = scratch / "scifact_part.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "RAGLINE_CACHE": str(scratch / "cache-kill")}
    outcomes = []
    local_uri = f"milvus://{server}/local_{int(time.time())}"
    base = [sys.executable, "-m", "ragline", "index", str(source), "--embedder", "minilm", "--output", "json"]
    subprocess.run([*base, "--store", local_uri], env=env, check=True, stderr=subprocess.DEVNULL)
    local = open_store(local_uri, None, create=False)
    wanted = local._live_hashes()
    local.close()
    for seconds in kill_after:
        uri = f"milvus://{server}/kill_{int(seconds)}_{int(time.time())}"
        command = [*base, "--store", uri, "--workers", "ray", "--ray-workers", "2"]
        process = subprocess.Popen(command, env=env, start_new_session=True, stderr=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL)  # fmt: skip
        time.sleep(seconds)
        finished = process.poll() is not None
        if not finished:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        try:
            partial = open_store(uri, None, create=False)
            at_kill = len(partial)
            partial.close()
        except Exception:
            at_kill = 0  # killed before the collection was created
        subprocess.run(command, env=env, check=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        collection = open_store(uri, None, create=False)
        live, count = collection._live_hashes(), len(collection)
        collection.close()
        outcome = {"kill_after_s": seconds, "finished_before_kill": finished, "rows_at_kill": at_kill,
                   "rows_after_rerun": count, "distinct_ids": len(live), "same_as_local": live == wanted}  # fmt: skip
        outcomes.append(outcome)
        log(f"kill: {outcomes[-1]}")
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="cranfield,scifact")
    parser.add_argument("--ray-docs", type=int, default=300)
    parser.add_argument("--kill-after", default="20,45", help="seconds after which a run is killed (comma-separated)")
    parser.add_argument("--skip", default="", help="comma-separated: stores, ray, kill")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    scratch = Path(tempfile.mkdtemp(prefix="scale_out_"))
    server, address = start_milvus(scratch)
    result: dict[str, Any] = {}
    try:
        if "stores" not in skip:
            result["stores"] = {name: compare_stores(name, address) for name in args.datasets.split(",") if name}
        if "ray" not in skip or "kill" not in skip:
            result["ray"] = ray_throughput(args.ray_docs, [1, 2], scratch)
        if "kill" not in skip:
            result["kill"] = kill_and_rerun(address, scratch, [float(s) for s in args.kill_after.split(",")])
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
