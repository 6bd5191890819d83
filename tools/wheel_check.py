"""The built wheel installed as a user installs it, then ``ragline demo`` from it (``make wheel-check``).

A new, empty virtualenv; torch's CPU build first (the version requirements.lock pins, so that nothing pulls a
CUDA build); then ``pip install "WHEEL[dense,llm,server]"``, every other dependency resolved from the package
registries within pyproject.toml's ranges (minutes, gigabytes); then ``ragline demo`` in an empty folder. The
test suite installs the wheel beside the locked dependencies instead (tests/install/test_wheel.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from install.wheel import build_wheel, clean_env, make_venv, pip  # noqa: E402


def main() -> int:
    torch = re.search(r"^torch==\S+", (ROOT / "requirements.lock").read_text(), re.M)
    with tempfile.TemporaryDirectory(prefix="ragline-wheel-") as tmp:
        work = Path(tmp)
        wheel = build_wheel(work / "dist")
        python = make_venv(work / "venv")
        started = time.perf_counter()
        if torch:
            pip(python, "install", torch[0])
        pip(python, "install", f"{wheel}[dense,llm,server]")
        print(f"installed {wheel.name}[dense,llm,server] in {time.perf_counter() - started:.0f} s", flush=True)
        (work / "empty").mkdir()
        done = subprocess.run([str(work / "venv/bin/ragline"), "demo"], cwd=work / "empty", env=clean_env())
        return done.returncode


if __name__ == "__main__":
    sys.exit(main())
