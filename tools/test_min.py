"""The unit tier on the built wheel with every runtime dependency at its lower bound (``make test-min``).

Builds the wheel, makes a new virtualenv, installs ``constraints-min.txt`` (each runtime dependency at the lower
bound pyproject.toml declares) and the wheel without dependencies, checks that those versions are the ones
imported, then runs ``pytest -m "not slow and not models"`` with that interpreter. The test tools and the extras'
packages (pytest, torch, fastapi, ...) come from the environment running this script, layered under the new
virtualenv's own site-packages: only the runtime dependencies are at their lower bounds.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from install.wheel import build_wheel, clean_env, imported_from, make_venv, pip, versions  # noqa: E402


def pins(path: Path) -> dict[str, str]:
    found = (re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line) for line in path.read_text().splitlines())
    return {m[1]: m[2] for m in found if m}


def main() -> int:
    lower = pins(ROOT / "constraints-min.txt")
    with tempfile.TemporaryDirectory(prefix="ragline-min-") as tmp:
        work = Path(tmp)
        wheel = build_wheel(work / "dist")
        python = make_venv(work / "venv", overlay=True)
        print(f"installing the lower bounds into {work / 'venv'}: {', '.join(f'{k}=={v}' for k, v in lower.items())}")
        pip(python, "install", "-r", str(ROOT / "constraints-min.txt"))
        pip(python, "install", "--no-deps", "--ignore-installed", str(wheel))  # leaves the base ragline alone
        seen = versions(python, list(lower))
        print("imported:", seen)
        assert seen == lower, f"not the lower bounds: {seen}"
        where = imported_from(python, ["numpy", "ragline"], work)
        assert all(p.is_relative_to(work / "venv") for p in where), where
        done = subprocess.run(
            [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow and not models"],
            cwd=ROOT,
            # the extras' programs (milvus-lite's server) live beside the running interpreter
            env=clean_env(PATH=f"{work / 'venv/bin'}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"),
        )
        return done.returncode


if __name__ == "__main__":
    sys.exit(main())
