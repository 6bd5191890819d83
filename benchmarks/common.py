"""What the benchmark scripts share: where the data is, a clock with progress lines, timing, memory, versions,
JSON results.

Imported by the scripts beside it (``from common import ...``; a script's own folder is on
``sys.path``). It imports nothing heavy, so a script can still set thread variables before numpy loads.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

START = time.perf_counter()  # when the script began (this module is among its first imports)
ROOT = Path(__file__).resolve().parents[1]  # the repository


def bench_root() -> Path:
    """The benchmark data folder: ``$RAGLINE_BENCH``, else ``shared/bench`` beside the repository.

    The one place a benchmark looks for its data; a script's dataset default is ``bench_root() / NAME``.
    """
    return Path(os.environ.get("RAGLINE_BENCH") or ROOT.parent / "shared" / "bench")


def command_argv(command: str, **fill: str) -> list[str]:
    """The argv of a command as BENCHMARKS.md quotes it: ``ragline ...`` or ``python ...`` run from this
    interpreter, ``{name}`` placeholders filled from ``fill`` (``{bench}`` defaults to :func:`bench_root`)."""
    for name, value in {"bench": str(bench_root()), **fill}.items():
        command = command.replace(f"{{{name}}}", value)
    program, *rest = shlex.split(command)
    runners = {"ragline": [sys.executable, "-m", "ragline"], "python": [sys.executable]}
    if program not in runners:
        raise ValueError(f"command must start with `ragline` or `python`: {command!r}")
    return [*runners[program], *rest]


def elapsed() -> float:
    """Seconds since the script began."""
    return time.perf_counter() - START


def log(message: str, memory: bool = False) -> None:
    """A progress line on stderr, stamped with the elapsed time (and the resident memory, with ``memory``)."""
    stamp = f"{elapsed():7.1f}s {rss_gib():5.2f} GiB" if memory else f"{elapsed():7.1f}s"
    print(f"[{stamp}] {message}", file=sys.stderr, flush=True)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()`` and the seconds it took."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def rss_gib() -> float:
    """Resident memory of this process now (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30


def peak_rss_gib() -> float:
    """The most resident memory this process has held."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def package_version(dist: str) -> str | None:
    """The installed version of distribution ``dist`` (None: not installed)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def print_result(result: dict[str, Any], output: str = "json") -> None:
    """The result on stdout: one JSON line, or indented when ``output`` is ``"pretty"``."""
    print(json.dumps(result, indent=2 if output == "pretty" else None))


def write_result(path: Path, result: dict[str, Any]) -> None:
    """The result as an indented JSON file (the form kept under ``benchmarks/results``)."""
    path.write_text(json.dumps(result, indent=2) + "\n")
