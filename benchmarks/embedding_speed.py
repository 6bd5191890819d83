"""Embedding throughput: ragline's indexing path against raw sentence-transformers on the same passages.

Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/embedding_speed.py --dataset ../shared/bench/scifact --sample 512

What is measured, in one process, on the same texts:

- Passages: ``--sample`` SciFact abstracts drawn with a fixed seed, each as the index embeds it
  (``FIELD_TEXT["body"]``: title, line break, text).
- ragline: ``CachedEmbedder(embedder, EmbeddingCache(empty file)).embed_passages(texts)``, the call an
  index build makes (``Index._vectors_for``), through the embedding cache with a new, empty cache file
  every pass, so every passage is embedded and written to the cache as in a first build.
- raw: ``SentenceTransformer.encode(texts, batch_size=32, normalize_embeddings=True)`` on the same
  model object (sentence-transformers sorts the texts by length into its batches).
- One warm-up call of each (it loads torch and, where the model allows, makes ragline's one-time ONNX
  export for queries, which is not part of indexing throughput), then ``--passes`` timed passes, the
  two interleaved and alternating which goes first; medians. ``ratio`` = raw seconds / ragline seconds
  (>= 1: ragline as fast as raw). The vectors of both are compared (``max_abs_difference``).
- Memory: the process's resident memory after the warm-up and its peak (one process holds both runs,
  so the peak is shared); load average before and after, as the machine is shared.

Output: one JSON line on stdout (``--output pretty`` indents it); progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import bench_root, log, package_version, peak_rss_gib, print_result, rss_gib, timed  # noqa: E402


def sample_passages(folder: Path, n: int, seed: int) -> list[str]:
    """``n`` abstracts of a BEIR corpus, as the index's ``body`` field holds them."""
    from ragline.index.segment import FIELD_TEXT
    from ragline.types import Document

    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    chosen = random.Random(seed).sample(rows, min(n, len(rows)))
    return [FIELD_TEXT["body"](Document(str(r["_id"]), r.get("text") or "", r.get("title") or "")) for r in chosen]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=bench_root() / "scifact", help="a BEIR folder")
    parser.add_argument("--sample", type=int, default=512, help="passages embedded per pass")
    parser.add_argument("--passes", type=int, default=3, help="timed passes of each (median reported)")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--batch-size", type=int, default=32, help="batch size of both (ragline's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", choices=["json", "pretty"], default="json")
    args = parser.parse_args(argv)

    import numpy as np

    from ragline.models import CachedEmbedder, EmbeddingCache, load_embedder

    load_before = os.getloadavg()
    texts = sample_passages(args.dataset, args.sample, args.seed)
    embedder = load_embedder(args.embedder)
    model = embedder.model
    prefixed = [embedder.passage_text(t) for t in texts]
    log(f"{len(texts)} passages, {sum(map(len, texts)) / len(texts):.0f} characters on average; {embedder.id}")

    with tempfile.TemporaryDirectory(prefix="ragline-embedding-speed-") as tmp:
        caches = iter(range(10**6))

        def ragline_run() -> np.ndarray:
            cache = EmbeddingCache(Path(tmp) / f"pass-{next(caches)}.sqlite")  # empty: every passage embedded
            cached = CachedEmbedder(embedder, cache)
            vectors = cached.embed_passages(texts, batch_size=args.batch_size)
            assert cached.computed == len(set(prefixed)) and cached.cached == 0
            return vectors

        def raw_run() -> np.ndarray:
            return model.encode(
                prefixed,
                batch_size=args.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )

        runs = {"ragline": ragline_run, "raw": raw_run}
        warm = {name: timed(run) for name, run in runs.items()}
        log("warm-up: " + ", ".join(f"{n} {s:.1f}s" for n, (_, s) in warm.items()), memory=True)
        rss_after_warmup = rss_gib()
        difference = float(np.abs(warm["ragline"][0] - warm["raw"][0]).max())
        times: dict[str, list[float]] = {name: [] for name in runs}
        for p in range(args.passes):
            for name in list(runs) if p % 2 == 0 else list(runs)[::-1]:
                times[name].append(timed(runs[name])[1])
            log(f"pass {p + 1}/{args.passes}: " + ", ".join(f"{n} {t[-1]:.2f}s" for n, t in times.items()))

    import torch

    median = {name: statistics.median(t) for name, t in times.items()}
    result = {
        "dataset": args.dataset.name,
        "passages": len(texts),
        "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
        "embedder": embedder.id,
        "batch_size": args.batch_size,
        "passes": args.passes,
        "ragline_s": round(median["ragline"], 3),
        "raw_s": round(median["raw"], 3),
        "ragline_passages_per_s": round(len(texts) / median["ragline"], 1),
        "raw_passages_per_s": round(len(texts) / median["raw"], 1),
        "ratio": round(median["raw"] / median["ragline"], 3),
        "pass_times": {name: [round(t, 3) for t in ts] for name, ts in times.items()},
        "max_abs_difference": difference,
        "torch_threads": torch.get_num_threads(),
        "rss_after_warmup_gib": round(rss_after_warmup, 3),
        "peak_rss_gib": round(peak_rss_gib(), 3),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "versions": {name: package_version(name) for name in ("ragline", "sentence-transformers", "torch")},
    }
    print_result(result, args.output)
    return result


if __name__ == "__main__":
    main()
