"""mypy over ``src/`` against a baseline of error counts per module that may only shrink.

    python tools/mypy_baseline.py           # check (make typecheck, make lint, make test)
    python tools/mypy_baseline.py --update  # rewrite the baseline to today's counts (make mypy-baseline)

mypy's settings are in pyproject.toml (``[tool.mypy]``; the public API strictly). The check fails when a
module has more errors than ``tools/mypy_baseline.json`` allows, or errors in a module the baseline does not
list, and prints those modules' errors; a module with fewer errors passes and is reported, so the fix can
shrink the baseline with ``--update`` in the same commit.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "mypy_baseline.json"
ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+(?::\d+)?: error: ")


def run_mypy() -> tuple[Counter[str], dict[str, list[str]], str]:
    """Error counts and lines per module path (relative to the repository), and mypy's whole output."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty", "--no-color-output"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):  # 2: mypy itself failed (a config or syntax error)
        raise SystemExit(f"mypy failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    counts: Counter[str] = Counter()
    lines: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        match = ERROR.match(line)
        if match:
            path = Path(match["path"]).as_posix()
            counts[path] += 1
            lines.setdefault(path, []).append(line)
    return counts, lines, done.stdout


def compare(counts: Counter[str], baseline: dict[str, int]) -> tuple[list[str], list[str]]:
    """(modules over their baseline, modules under it)."""
    grown = sorted(path for path, n in counts.items() if n > baseline.get(path, 0))
    shrunk = sorted(path for path, n in baseline.items() if counts.get(path, 0) < n)
    return grown, shrunk


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="mypy with a per-module error baseline that only shrinks")
    parser.add_argument("--update", action="store_true", help=f"write today's counts to {BASELINE.name}")
    args = parser.parse_args(argv)
    counts, lines, _ = run_mypy()
    if args.update:
        BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n", encoding="utf-8")
        print(f"{BASELINE.relative_to(ROOT)}: {sum(counts.values())} errors in {len(counts)} modules")
        return 0
    baseline = json.loads(BASELINE.read_text(encoding="utf-8")) if BASELINE.is_file() else {}
    grown, shrunk = compare(counts, baseline)
    for path in grown:
        print(f"{path}: {counts[path]} mypy errors, the baseline allows {baseline.get(path, 0)}:")
        print("\n".join("  " + line for line in lines[path]))
    if shrunk:
        print(f"fewer mypy errors than the baseline in {', '.join(shrunk)}: `make mypy-baseline` shrinks it")
    total, allowed = sum(counts.values()), sum(baseline.values())
    print(f"mypy: {total} errors (baseline {allowed}); {'FAILED' if grown else 'ok'}")
    return 1 if grown else 0


if __name__ == "__main__":
    sys.exit(main())
