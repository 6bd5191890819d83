"""``make bench``: every benchmark and experiment behind BENCHMARKS.md, one JSON file each.

Long (an hour or more on 2 cores: embedding SciFact, a million-document BM25 index, a million-vector
HNSW). Each step's JSON line goes to ``benchmarks/results/<name>.json``; a failed step is reported and
the others still run. ``--only NAME`` runs one step; ``--list`` shows them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(os.environ.get("RAGLINE_BENCH") or ROOT.parent / "shared" / "bench")
RESULTS = ROOT / "benchmarks" / "results"
PY = sys.executable
RAGLINE = [PY, "-m", "ragline"]


def steps() -> dict[str, list[str]]:
    scifact = str(BENCH / "scifact")
    hybrid_sweep = ["--retriever", "bm25", "--retriever", "dense", "--retriever", "hybrid",
                    "--retriever", "hybrid:fuser=rrf,k=60", "--retriever", "hybrid:fuser=z_score"]  # fmt: skip
    out = {
        "bm25_speed_scifact": [PY, "benchmarks/bm25_speed.py", "--dataset", scifact, "--output", "json"],
        "bm25_speed_1m": [PY, "benchmarks/bm25_speed.py", "--synthetic", "1000000", "--output", "json"],
        "ann": [PY, "benchmarks/ann.py", "--output", "json"],
    }
    for name in ("scifact", "cranfield", "cisi", "npl"):
        out[f"bm25_{name}"] = [*RAGLINE, "eval", str(BENCH / name), "--retriever", "bm25", "--output", "json"]
        out[f"hybrid_{name}"] = [*RAGLINE, "eval", str(BENCH / name), *hybrid_sweep, "--output", "json"]
    weighted = [
        "--retriever",
        "hybrid:fuser=min_max,weights=0.3/0.7",
        "--retriever",
        "hybrid:fuser=min_max,weights=0.7/0.3",
    ]
    out["fusion_scifact_train"] = [
        *RAGLINE,
        "eval",
        scifact,
        "--split",
        "train",
        *hybrid_sweep,
        *weighted,
        "--output",
        "json",
    ]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", help="run just this step (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the steps and exit")
    args = parser.parse_args()
    plan = steps()
    if args.list:
        for name, cmd in plan.items():
            print(f"{name}: {' '.join(cmd)}")
        return 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    failed = []
    for name, cmd in plan.items():
        if args.only and name not in args.only:
            continue
        started = time.perf_counter()
        print(f"[bench] {name}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            failed.append(name)
            print(f"[bench] {name} FAILED ({done.returncode}):\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        (RESULTS / f"{name}.json").write_text(done.stdout.strip().splitlines()[-1] + "\n")
        print(f"[bench] {name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    if failed:
        print(f"[bench] failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
