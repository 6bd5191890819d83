"""``ragline doctor`` from an empty ``$RAGLINE_CACHE``: a user's first run, timed as a whole process.

Each config runs in its own fresh cache folder (a temporary one): the models come from their wheels (the
multi-part local LLM is joined into the folder again), and every embedding and LLM reply is computed anew.
Reports each run's wall time and CPU seconds, the time of each probe, its status and the reader (model) it
judged, and the machine's load average before and after (the machine may be shared: the load is part of the wall
time, not of the CPU seconds).

    PYTHONPATH=src python benchmarks/doctor_cold.py [--configs recommended,pipelines/weak.toml]
        [--quick] [--out benchmarks/results/doctor_cold.json] [--log doctor_cold.log]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import print_result, write_result  # noqa: E402


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold_run(config: str, quick: bool, log: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragline-cold-cache-") as cache:
        argv = [sys.executable, "-m", "ragline", "doctor", "--config", config, "--output", "json"]
        argv += ["--quick"] if quick else []
        env = {**os.environ, "RAGLINE_CACHE": cache}
        load_before = os.getloadavg()
        cpu_before = _children_cpu_seconds()
        started = time.perf_counter()
        with log.open("a", encoding="utf-8") as progress:  # the doctor's progress lines, as they come
            done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=progress, text=True, check=False)
        seconds = time.perf_counter() - started
        cpu = _children_cpu_seconds() - cpu_before
        load_after = os.getloadavg()
        cached = sorted(p.name for p in Path(cache).iterdir())
    if done.returncode != 0:
        raise SystemExit(f"ragline doctor --config {config} exited {done.returncode}; see {log}")
    result = json.loads(done.stdout)
    probes = result["probes"]
    return {
        "config": config,
        "quick": quick,
        "wall_seconds": round(seconds, 1),
        # CPU seconds of the doctor process (and what it waited for): what the run costs, whatever else the
        # machine is doing; the wall time follows the load.
        "cpu_seconds": round(cpu, 1),
        "load_average_before": [round(x, 1) for x in load_before],
        "load_average_after": [round(x, 1) for x in load_after],
        "cache_after": cached,
        "n_probes": len(probes),
        "flagged": sum(p["status"] == "flag" for p in probes),
        "probes": [{k: p.get(k) for k in ("name", "status", "seconds", "model", "figure", "rule")} for p in probes],
        "progress": [line for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("probe:")],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="recommended,pipelines/weak.toml")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/doctor_cold.json"))
    parser.add_argument("--log", type=Path, default=Path("doctor_cold.log"), help="the runs' progress lines")
    parser.add_argument("--output", choices=("json", "pretty"), default="json")
    args = parser.parse_args()
    result = {
        "cpus": os.cpu_count(),
        "runs": [cold_run(c.strip(), args.quick, args.log) for c in args.configs.split(",") if c.strip()],
    }
    write_result(args.out, result)
    print_result(result, args.output)


if __name__ == "__main__":
    main()
