"""What a sync of the entity graph redoes when one document changes: components partitioned, reports rebuilt.

The Orrin training world (whole documents, the rules extractor, no LLM): the graph is built, then each of
``--changes`` documents (every n-th, in id order) in turn gets one sentence naming a new person added and the
graph is built again with the previous one (as ``ragline index --structure graph`` syncs). Per change: the
connected components partitioned again (of all), the community reports rebuilt (of all) and the seconds; the
reports whose ids and text are unchanged must be the untouched ones. Prints JSON (``--out`` also writes it).

    PYTHONPATH=src python benchmarks/graph_sync.py [--changes 10] [--out FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from common import print_result, write_result
from ragline.corpora.orrin import TRAIN_SEED, build_orrin
from ragline.structures.graph import build_graph


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--out")
    args = parser.parse_args()
    docs = sorted(build_orrin(TRAIN_SEED).documents, key=lambda d: d.id)
    started = time.perf_counter()
    base = build_graph(docs)
    full = time.perf_counter() - started
    step = max(len(docs) // max(args.changes, 1), 1)
    rows = []
    for n in range(0, len(docs), step)[: args.changes]:
        doc = docs[n]
        changed = dataclasses.replace(doc, text=doc.text + " Ines Harrowgate reviewed this page.")
        started = time.perf_counter()
        after = build_graph([*docs[:n], changed, *docs[n + 1 :]], previous=base)
        seconds = time.perf_counter() - started
        before = {r.id: (r.text, r.sources) for r in base.reports}
        kept = sum(before.get(r.id) == (r.text, r.sources) for r in after.reports)
        rows.append(
            {
                "document": doc.id,
                **after.rebuilt,
                "reports": len(after.reports),
                "kept": kept,
                "seconds": round(seconds, 3),
            }
        )
    result = {
        "benchmark": "graph_sync",
        "corpus": f"orrin-train-{TRAIN_SEED}",
        "documents": len(docs),
        "full_build_seconds": round(full, 3),
        "components": base.rebuilt["components"],
        "reports": len(base.reports),
        "changes": rows,
        "mean_components_partitioned": sum(r["components_partitioned"] for r in rows) / len(rows),
        "mean_reports_built": sum(r["reports_built"] for r in rows) / len(rows),
        "mean_sync_seconds": round(sum(r["seconds"] for r in rows) / len(rows), 3),
    }
    print_result(result)
    if args.out:
        write_result(Path(args.out), result)


if __name__ == "__main__":
    main()
