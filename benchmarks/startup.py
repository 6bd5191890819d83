"""Start-up: each CLI command as a whole process, against the ``python -c "import ragline.cli"`` floor.

Builds an index of the built-in Orrin corpus with default settings (``ragline corpus orrin --format markdown``,
then ``ragline index``), then times, in interleaved passes so that the machine's load falls on all alike:
the import floor, ``ragline search`` with BM25 only, ``ragline search`` hybrid (the default for an index with
embeddings) with a query whose vector is in no cache (so the query embedder really runs), and
``ragline info``. Reports the median wall time and the peak memory (max RSS of the child) of each, and the
ratios the speed targets are stated in.

    PYTHONPATH=src python benchmarks/startup.py [--passes 5] [--output json]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import print_result  # noqa: E402

QUERIES = [
    "receipt threshold for meals",
    "who approves a laptop replacement",
    "substation outage escalation contact",
    "annual leave carry over limit",
    "remote work allowance northern region",
    "bonus guideline for engineers",
    "vendor onboarding documents needed",
    "password reset help desk",
]


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one child process.

    CPU time is what the command itself costs; on shared cores the wall time adds other jobs' turns.
    """
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(argv)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--output", choices=["json", "pretty"], default="json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragline-startup-"))
    env = {**os.environ, "RAGLINE_CACHE": os.environ.get("RAGLINE_CACHE", str(work / "cache"))}
    python, cli = sys.executable, [sys.executable, "-m", "ragline"]
    # An installed package has its bytecode compiled (pip does it); a checkout run with
    # PYTHONDONTWRITEBYTECODE would recompile every module in every process, so compile once here.
    import ragline

    subprocess.run([python, "-m", "compileall", "-q", str(Path(ragline.__file__).parent)], check=True)
    index = str(work / "idx")
    # Their summaries are dropped (progress still goes to stderr): stdout holds only the result's JSON line.
    for setup in (["corpus", "orrin", "--format", "markdown", "--out", str(work / "orrin")],
                  ["index", str(work / "orrin"), "--index", index]):  # fmt: skip
        subprocess.run([*cli, *setup], env=env, check=True, stdout=subprocess.DEVNULL)
    # One hybrid search first: it makes the ONNX export of the query embedder when none is cached yet.
    subprocess.run([*cli, "search", "warm up", "--index", index], env=env, check=True, capture_output=True)
    commands: dict[str, Any] = {
        "import_floor": lambda i: [python, "-c", "import ragline.cli"],
        "search_bm25": lambda i: [*cli, "search", QUERIES[i % len(QUERIES)], "--index", index, "--retriever", "bm25"],
        # A query no earlier pass embedded: the embedding cache cannot answer it.
        "search_hybrid": lambda i: [*cli, "search", f"{QUERIES[i % len(QUERIES)]} {i}", "--index", index],
        "info": lambda i: [*cli, "info", "--index", index],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, float] = dict.fromkeys(commands, 0.0)
    for i in range(args.passes):
        for name, argv in commands.items():
            wall, cpu, peak = _run(argv(i), env)
            walls[name].append(wall)
            cpus[name].append(cpu)
            peaks[name] = max(peaks[name], peak)
    median = {name: statistics.median(values) for name, values in walls.items()}
    median_cpu = {name: statistics.median(values) for name, values in cpus.items()}
    result = {
        "benchmark": "startup",
        "passes": args.passes,
        "load_average": os.getloadavg(),
        "cores": len(os.sched_getaffinity(0)),
        "median_wall_s": {k: round(v, 3) for k, v in median.items()},
        "median_cpu_s": {k: round(v, 3) for k, v in median_cpu.items()},
        "peak_rss_mb": {k: round(v, 1) for k, v in peaks.items()},
        "hybrid_over_bm25": round(median["search_hybrid"] / median["search_bm25"], 2),
        "bm25_over_import_floor": round(median["search_bm25"] / median["import_floor"], 2),
        "cpu_hybrid_over_bm25": round(median_cpu["search_hybrid"] / median_cpu["search_bm25"], 2),
        "cpu_bm25_over_import_floor": round(median_cpu["search_bm25"] / median_cpu["import_floor"], 2),
        "self_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print_result(result, args.output)


if __name__ == "__main__":
    main()
