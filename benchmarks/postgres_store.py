"""Retrieval through the PostgreSQL store against the embedded index: the same dataset, chunks and BM25 settings.

A PostgreSQL server with pgvector (the ``pgserver`` wheel's binaries, on a local socket) holds the dataset's chunks
(``store.evaluate.evaluate_on_store``, the default pipeline's chunker, BM25 only: no model); the embedded index gets
the same through a ``file://`` store. Figures: the retrieval metrics of each, their largest difference, and the
seconds of each evaluation (indexing excluded) per query. Prints one JSON line; --results FILE writes it too.

Usage: python benchmarks/postgres_store.py --dataset {bench}/scifact --results benchmarks/results/postgres_store.json
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from common import bench_root, log, print_result, write_result


def evaluate(dataset: Any, config: Any, uri: str) -> tuple[dict[str, float], float]:
    """The metrics of ``config``'s retriever through ``uri`` and the seconds of the evaluation alone."""
    from ragline.store.evaluate import evaluate_on_store

    evaluate_on_store(dataset, config, uri)  # syncs the chunks (timed apart: the second run reuses them)
    started = time.perf_counter()
    result = evaluate_on_store(dataset, config, uri)
    return {m: round(v, 4) for m, v in result.metrics.items()}, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default=str(bench_root() / "scifact"))
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    import pgserver

    from ragline.config import load_config
    from ragline.eval.datasets import load_dataset

    dataset = load_dataset(args.dataset, "test")
    config = load_config("default").with_overrides(retrieve={"retriever": "bm25"})
    queries = len(dataset.judged_queries)
    scratch = Path(tempfile.mkdtemp(prefix="postgres-store-"))
    server = pgserver.get_server(scratch / "pg", cleanup_mode="stop")
    try:
        base = server.get_uri()  # postgresql://postgres:@/postgres?host=SOCKET
        head, _, query = base.partition("?")
        stores = {"embedded": f"file://{scratch / 'index'}", "postgresql": f"{head}/bench?{query}"}
        out: dict[str, Any] = {}
        for name, uri in stores.items():
            metrics, seconds = evaluate(dataset, config, uri)
            out[name] = {"metrics": metrics, "ms_per_query": round(seconds / queries * 1000, 1)}
            log(f"{name}: {out[name]}")
    finally:
        server.cleanup()
        shutil.rmtree(scratch, ignore_errors=True)
    diff = max(abs(out["embedded"]["metrics"][m] - out["postgresql"]["metrics"][m]) for m in out["embedded"]["metrics"])
    result = {
        "benchmark": "postgres_store",
        "dataset": f"{dataset.name} test, {queries} judged queries, {len(dataset.corpus)} documents",
        "retriever": "bm25 (store-bm25), the default pipeline's chunker",
        **out,
        "max_metric_diff": round(diff, 4),
    }
    print_result(result)
    if args.results:
        write_result(args.results, result)


if __name__ == "__main__":
    main()
