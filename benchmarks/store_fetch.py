"""Fetching a search's hits from a Milvus collection: one ``get`` per hit (before) against one ``get_many`` request
for the whole list (now, ``retrieve.base.hits_for``), on a loopback Milvus Lite server.

The first --docs SciFact documents go into a collection (BM25 only: no model); each of the first --queries SciFact
queries is ranked by ``store-bm25`` at each k, then its ranked ids are fetched both ways (the order alternates per
query, so neither way always runs on a warm server). Figures: milliseconds per query of the ranking, of each fetch
and of the whole ``search`` (ranking + fetch as it runs now), means and p50/p95, and whether both ways returned
the same documents. Prints one JSON line; --results FILE writes it too.

Usage: python benchmarks/store_fetch.py --docs 2000 --queries 100 --results benchmarks/results/store_fetch.json
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from common import bench_root, log, print_result, write_result
from load_test import percentile
from scale_out import start_milvus


def summary(seconds: list[float]) -> dict[str, float]:
    return {
        "mean_ms": round(sum(seconds) / len(seconds) * 1000, 2),
        "p50_ms": percentile(seconds, 0.5),
        "p95_ms": percentile(seconds, 0.95),
    }


def measure(collection: Any, queries: list[str], k: int) -> dict[str, Any]:
    from ragline.retrieve.registry import build_retriever

    retriever = build_retriever("bm25", collection)  # store-bm25 on a Milvus collection
    times: dict[str, list[float]] = {"rank": [], "get_per_hit": [], "get_many": [], "search": []}
    same = True
    for n, text in enumerate(queries):
        started = time.perf_counter()
        ids = [doc_id for doc_id, _ in retriever.rank(text, k)]
        times["rank"].append(time.perf_counter() - started)
        fetched = {}
        for way in ("get_per_hit", "get_many") if n % 2 == 0 else ("get_many", "get_per_hit"):
            started = time.perf_counter()
            if way == "get_per_hit":
                docs = {i: d for i in ids if (d := collection.get(i)) is not None}
            else:
                docs = collection.get_many(ids)
            times[way].append(time.perf_counter() - started)
            fetched[way] = docs
        same &= fetched["get_per_hit"] == fetched["get_many"]
        started = time.perf_counter()
        retriever.search(text, k)
        times["search"].append(time.perf_counter() - started)
    out: dict[str, Any] = {name: summary(values) for name, values in times.items()}
    out["fetch_speedup"] = round(out["get_per_hit"]["mean_ms"] / out["get_many"]["mean_ms"], 1)
    out["same_documents"] = same
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--k", type=int, action="append", help="hits per query, repeatable (default: 10 and 50)")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    from ragline.eval.datasets import load_dataset
    from ragline.index.store import IndexSettings
    from ragline.store import open_store

    dataset = load_dataset(bench_root() / "scifact")
    corpus = dataset.corpus[: args.docs]
    queries = list(dataset.queries.values())[: args.queries]
    with tempfile.TemporaryDirectory(prefix="store-fetch-") as scratch:
        process, server = start_milvus(Path(scratch))
        try:
            with open_store(f"milvus://{server}/fetch_{int(time.time())}", IndexSettings()) as collection:
                collection.add(corpus)
                collection.commit()
                log(f"{len(collection)} documents in Milvus Lite at {server}")
                by_k = {}
                for k in args.k or [10, 50]:
                    by_k[str(k)] = measure(collection, queries, k)
                    log(f"k={k}: {by_k[str(k)]}")
        finally:
            process.terminate()
            process.wait(timeout=30)
    result = {
        "benchmark": "store_fetch",
        "dataset": f"SciFact, first {len(corpus)} documents, first {len(queries)} queries",
        "store": "Milvus Lite server on loopback",
        "by_k": by_k,
    }
    print_result(result)
    if args.results:
        write_result(args.results, result)


if __name__ == "__main__":
    main()
