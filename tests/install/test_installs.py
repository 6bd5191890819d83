"""``pip install`` of the built wheel beside an application's own versions of numpy, rich and PyYAML.

Each case is a new, empty virtualenv (nothing layered under it) that first gets other versions of the three
inside pyproject.toml's ranges, then the wheel, its runtime dependencies resolved from the package registry.
pip must keep the three as they were, and the install must run: BM25 indexing, search and the extractive
reader need no extra (faiss, torch and the models come with ``dense``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .wheel import clean_env, make_venv, pip
from .wheel import versions as installed_versions

CASES = [
    {"numpy": "2.2.6", "rich": "14.0.0", "PyYAML": "6.0.1"},
    {"numpy": "2.3.5", "rich": "14.2.0", "PyYAML": "6.0.2"},
]


@pytest.mark.slow
@pytest.mark.parametrize("wanted", CASES, ids=lambda v: "-".join(f"{k}{v[k]}" for k in v))
def test_installing_the_wheel_keeps_the_applications_versions(wheel: Path, tmp_path: Path, wanted) -> None:
    """Planted faults: `numpy>=2.4.6` as the lower bound (the exact pin it replaced) makes pip upgrade numpy
    2.2.6; faiss imported when the index module loads (as before ``lazy_module(..., install=)``) failed
    `ragline index` here with "No module named 'faiss'"."""
    python = make_venv(tmp_path / "venv")
    pip(python, "install", *(f"{k}=={v}" for k, v in wanted.items()))
    pip(python, "install", str(wheel))
    assert installed_versions(python, list(wanted)) == wanted
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text("# Annual leave\n\nEvery employee has 27 days of annual leave a year.\n")
    ragline = str(tmp_path / "venv/bin/ragline")
    outputs = []
    for argv in (
        [ragline, "index", "./docs", "--embedder", "none"],
        [ragline, "search", "annual leave days", "--output", "json"],
        [ragline, "ask", "How many days of annual leave?", "--reader", "extractive", "--output", "json"],
    ):
        done = subprocess.run(argv, cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
        outputs.append(done.stdout)
    assert json.loads(outputs[1])["hits"][0]["doc_id"] == "leave"
    assert json.loads(outputs[2])["sources"][0]["doc_id"] == "leave"
